// The accumulation length of an imported task, measured rather than guessed: KernelBench states
// no error model, so the tolerance is set from how far torch's own float32 is from the float64
// reference under ksmith's comparison, with room for honest kernels that sum in another order.
#pragma once

#include <cstdint>

#include "core/result.h"
#include "eval/task_check.h"
#include "task/task.h"

namespace ksmith {

struct Calibration {
  int64_t accumulation = 2;  // the smallest power of two that passes the kept shapes (at least 2)
  int cases = 0;
  /// Shapes where even torch's float32 is far from the reference (a layer norm over one element:
  /// fp32's rounding of the mean, divided by sqrt(eps)): more than kOutlierFactor times the
  /// median shape's need. Keeping them would loosen every other shape's bound; the importer drops
  /// them from the task.
  std::vector<DimValues> dropped_shapes;
};

inline constexpr int64_t kOutlierFactor = 64;

/// Runs the baseline (torch eager, float32) and the reference on the cases `tasks check` would
/// run, makes each float32 output's error to the reference `headroom` times larger, and finds
/// for each shape the smallest power-of-two accumulation at which ksmith's comparison passes.
/// Fails where fewer than two shapes would be left.
Result<Calibration> CalibrateAccumulation(Task task, KernelEntry reference, KernelEntry baseline,
                                          KernelFinish baseline_finish, double headroom = 4,
                                          const TaskCheckOptions& options = TaskCheckOptions{});

}  // namespace ksmith
