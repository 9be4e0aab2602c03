#include "kernelbench/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstring>
#include <string>
#include <vector>

#include "eval/cases.h"
#include "sandbox/layout.h"

namespace ksmith {
namespace {

constexpr uint64_t kCalibrationSeed = 0xca11'b7a7;
constexpr int kLargestLog2 = 30;
constexpr int64_t kSmallOutputElements = 64;
constexpr int kSmallOutputSeeds = 16;

// Moves every fp32 output of the snapshot (guards of size 0) `headroom` times further from the
// reference: the calibrated tolerance then passes kernels that err that much more than torch.
void Amplify(const PreparedCase& prepared, std::string& snapshot, double headroom) {
  size_t offset = 0;
  size_t output = 0;
  for (const auto& slot : prepared.layout.tensors) {
    if (slot.output) {
      if (slot.dtype == DType::kFloat32) {
        const std::vector<double>& expected = prepared.expected[output];
        for (size_t i = 0; i < slot.Elements() && i < expected.size(); ++i) {
          float got;
          std::memcpy(&got, snapshot.data() + offset + 4 * i, 4);
          if (!std::isfinite(got)) continue;
          const auto moved = static_cast<float>(expected[i] + headroom * (static_cast<double>(got) - expected[i]));
          std::memcpy(snapshot.data() + offset + 4 * i, &moved, 4);
        }
      }
      ++output;
    }
    offset += slot.bytes + 2 * prepared.layout.guard_bytes;
  }
}

}  // namespace

Result<Calibration> CalibrateAccumulation(Task task, KernelEntry reference, KernelEntry baseline,
                                          KernelFinish baseline_finish, double headroom,
                                          const TaskCheckOptions& options) {
  struct Case {
    PreparedCase prepared;
    std::string snapshot;
    std::string label;
  };
  std::vector<Case> cases;
  uint64_t ordinal = 0;
  // Above 1 the verifier also asks the reference how large each output's terms are (the
  // magnitude), so calibration starts at 2, where the verdict's comparison has that help too.
  task.accumulation_expression = "2";
  for (const DimValues& shape : CheckedShapes(task, options)) {
    // torch's error varies from draw to draw, most where few outputs come out of much arithmetic
    // (a triplet loss over one row: a difference of two distances): one or two draws set the
    // bound too tight for the next. Small outputs get many draws; they are cheap.
    int64_t output_elements = 0;
    for (const auto& output : task.outputs) output_elements += task.Elements(output, shape);
    const int seeds = output_elements <= kSmallOutputElements ? kSmallOutputSeeds : std::max(1, options.seeds);
    for (int seed = 0; seed < seeds; ++seed) {
      for (Distribution distribution : task.distributions) {
        const CaseSpec spec{shape, distribution, DeriveSeed(kCalibrationSeed, ordinal++),
                            fmt::format("{}, {}, seed #{}", task.FormatShape(shape), DistributionName(distribution),
                                        seed + 1)};
        Case item{PrepareCase(task, spec, 0), {}, spec.label};
        ComputeExpected(task, reference, item.prepared);
        GuardedArena arena(item.prepared.layout);
        if (auto ready = arena.Prepare(item.prepared.inputs, 0); !ready.ok()) return ready.error();
        baseline(arena.pointers(), arena.scalars());
        if (baseline_finish != nullptr) baseline_finish(nullptr);
        item.snapshot = arena.Snapshot();
        Amplify(item.prepared, item.snapshot, headroom);
        cases.push_back(std::move(item));
      }
    }
  }
  // Each shape's need: the largest over its cases (distributions) of the smallest passing log2.
  std::map<std::string, int> need_by_shape;
  std::map<std::string, DimValues> shape_by_key;
  std::map<std::string, std::string> failure_by_shape;
  for (const auto& item : cases) {
    const DimValues shape = CaseShape(task, item.prepared.layout);
    const std::string key = task.FormatShape(shape);
    shape_by_key[key] = shape;
    int found = kLargestLog2 + 1;
    for (int log2 = 1; log2 <= kLargestLog2 && found > kLargestLog2; ++log2) {
      task.accumulation_expression = std::to_string(int64_t{1} << log2);
      const CaseCheck check = CheckSnapshot(task, item.prepared, item.snapshot, 0);
      if (check.problem == CaseProblem::kNone) {
        found = log2;
      } else if (log2 == kLargestLog2) {
        failure_by_shape[key] = fmt::format("at {}: {}", item.label, check.description);
      }
    }
    need_by_shape[key] = std::max(need_by_shape[key], found);
  }
  std::vector<int> needs;
  for (const auto& [key, need] : need_by_shape) needs.push_back(need);
  std::sort(needs.begin(), needs.end());
  const int median = needs.empty() ? 1 : needs[needs.size() / 2];
  const int outlier_log2 = median + static_cast<int>(std::log2(static_cast<double>(kOutlierFactor)));
  Calibration calibration;
  calibration.cases = static_cast<int>(cases.size());
  int kept_need = 1;
  size_t kept = 0;
  std::string worst_failure;
  for (const auto& [key, need] : need_by_shape) {
    if (need > outlier_log2) {
      calibration.dropped_shapes.push_back(shape_by_key[key]);
      if (failure_by_shape.contains(key)) worst_failure = failure_by_shape[key];
      continue;
    }
    kept_need = std::max(kept_need, need);
    ++kept;
  }
  if (kept < 2 && need_by_shape.size() >= 2) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "torch's own float32 output is far from the float64 reference on most shapes (at {}x its error "
                     "ksmith's comparison needs accumulation beyond 2^{} on {} of {} shapes){}",
                     headroom, outlier_log2, need_by_shape.size() - kept, need_by_shape.size(),
                     worst_failure.empty() ? "" : ": " + worst_failure);
  }
  if (kept_need > kLargestLog2) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "torch's own float32 output fails ksmith's comparison with the float64 reference even at "
                     "accumulation 2^{} ({}x its error) {}", kLargestLog2, headroom, worst_failure);
  }
  calibration.accumulation = int64_t{1} << kept_need;
  return calibration;
}

}  // namespace ksmith
