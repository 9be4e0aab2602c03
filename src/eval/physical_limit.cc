#include "eval/physical_limit.h"

#include <algorithm>

#include <fmt/format.h>

namespace ksmith {
namespace {

// Measured peaks are not the true peaks, and a device busy while they were measured reads low:
// only times well under the floor are called impossible.
constexpr double kPhysicalSlack = 2.5;

}  // namespace

bool CheckPhysicalLimit(VerdictRecorder& recorder, Timing& timing, const Task& task, const DimValues& shape,
                        const MeasuredPeaks& peaks, const std::string& device) {
  auto& stage = recorder.Stage("physical_limit");
  if (peaks.bandwidth_gbps <= 0 || peaks.fp32_gflops <= 0) {
    stage.details.summary = fmt::format("skipped: {} has no measured peaks (run `ksmith doctor`)", device);
    return true;
  }
  const double flops = static_cast<double>(task.Flops(shape));
  const double bytes = static_cast<double>(task.MinimumBytes(shape));
  // The trusted baseline cannot beat the device: if it ran faster than the measured peaks allow,
  // the measurement was low (a busy device when it was taken), and the floor follows the baseline
  // instead, so an honest kernel is never called a cheat for a stale measurement.
  const double baseline_s = timing.baseline_us.median * 1e-6;
  const double bandwidth_gbps = std::max(peaks.bandwidth_gbps, bytes / baseline_s / 1e9);
  const double gflops = std::max(peaks.fp32_gflops, flops / baseline_s / 1e9);
  const double compute_us = flops / (gflops * 1e3);
  const double memory_us = bytes / (bandwidth_gbps * 1e3);
  timing.floor_us = std::max(compute_us, memory_us);
  timing.bound_by = memory_us >= compute_us ? "memory" : "compute";
  timing.roofline_fraction = timing.floor_us / timing.candidate_us.median;
  stage.details.limit = PhysicalLimitFacts{timing.floor_us, timing.bound_by, bandwidth_gbps, gflops};
  if (bandwidth_gbps > peaks.bandwidth_gbps || gflops > peaks.fp32_gflops) {
    stage.details.note = fmt::format("the baseline beat {}'s measured peaks; they look low: run `ksmith doctor "
                                        "--refresh` when it is quiet", device);
  }
  if (timing.candidate_us.median * kPhysicalSlack < timing.floor_us) {
    return recorder.Finish(stage, VerdictStatus::kIntegrityViolation,
                           fmt::format("measured {:.2f} us, but {} needs at least {:.2f} us to move {:.0f} bytes "
                                       "and do {:.0f} flops: the time is not real",
                                       timing.candidate_us.median, device, timing.floor_us, bytes, flops),
                           FailureKind::kTimeNotReal);
  }
  stage.details.summary = fmt::format("{:.0f}% of the {} limit", 100 * timing.roofline_fraction, timing.bound_by);
  return true;
}

}  // namespace ksmith
