// The physical-limit stage every backend runs after timing: a time below what the device's
// measured peaks allow for the bytes the task must move and the flops it must do is not a
// speedup but an integrity violation. The floor also gives the verdict its roofline position.
#pragma once

#include <string>

#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

/// A device's measured peaks; zero where not measured.
struct MeasuredPeaks {
  double bandwidth_gbps = 0;  // [GB/s]
  double fp32_gflops = 0;     // [GFLOP/s]
};

/// Records the "physical_limit" stage for `timing` (its floor, bound and roofline fraction are
/// set) at `shape`. `device` names the device in messages ("this machine", "this GPU"). Returns
/// false, having failed the stage with integrity_violation, when the candidate beat the floor.
bool CheckPhysicalLimit(VerdictRecorder& recorder, Timing& timing, const Task& task, const DimValues& shape,
                        const MeasuredPeaks& peaks, const std::string& device);

}  // namespace ksmith
