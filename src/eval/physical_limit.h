// The physical-limit stage every backend runs after timing: a time below what the device's
// measured peaks allow for the bytes the task must move and the flops it must do is not a
// speedup but an integrity violation. The floor also gives the verdict its roofline position.
//
// The limit is the measured peaks raised by kPeakNoiseMargin, the most an honest kernel was seen
// to beat them by (the peaks are the best of several repetitions of simple kernels: a tuned one
// can do a little better). A roofline fraction is taken against that limit, so a passed verdict
// never claims more than 100%: above it, the time is not real.
#pragma once

#include <functional>
#include <string>

#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

/// How far above its measured peaks a device may be driven by an honest kernel.
inline constexpr double kPeakNoiseMargin = 1.15;
/// The margin when other work disturbed the timing: peaks measured then, or before, say little
/// about what the kernel could reach between the other work's bursts.
inline constexpr double kDisturbedPeakMargin = 2.5;

/// A device's measured peaks; zero where not measured.
struct MeasuredPeaks {
  double bandwidth_gbps = 0;       // [GB/s] bytes moved per second, the best stream measured
  double fp32_gflops = 0;          // [GFLOP/s] FP32 FMA on every core or SM
  double tensor_16bit_gflops = 0;  // [GFLOP/s] 16-bit tensor units (cuda: a BF16 GEMM); 0 when none
};

/// The compute rate no kernel on inputs of `dtype` can beat: for 16-bit inputs the tensor units
/// (or, where none were measured, a bound far above the FMA peak: matrix extensions such as AMX
/// are not measured), for fp32 the FMA peak or the tensor units emulating fp32 (three TF32
/// products, at half the BF16 rate), whichever is higher. [GFLOP/s]
double ComputePeakGflops(const MeasuredPeaks& peaks, DType dtype);

/// Records the "physical_limit" stage for `timing` (its floor, bound and roofline fraction are
/// set) at `shape`. `device` names the device in messages ("this machine", "this GPU"). Before
/// calling a time impossible it takes the higher of `peaks` and `remeasure()` (when given: peaks
/// measured now). Returns false, having failed the stage with integrity_violation, when the
/// candidate beat the floor. `margin` raises the peaks to the limit.
bool CheckPhysicalLimit(VerdictRecorder& recorder, Timing& timing, const Task& task, const DimValues& shape,
                        const MeasuredPeaks& peaks, const std::string& device,
                        const std::function<MeasuredPeaks()>& remeasure = {}, double margin = kPeakNoiseMargin);

}  // namespace ksmith
