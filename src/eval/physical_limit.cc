#include "eval/physical_limit.h"

#include <algorithm>

#include <fmt/format.h>

namespace ksmith {
namespace {

// With no tensor units measured, 16-bit work is bounded only far above the FMA peak: a CPU's
// matrix extensions (AMX) run 16-bit products an order of magnitude faster than its FMA units.
constexpr double kUnmeasured16BitFactor = 16;
// Packed 16-bit FMA (HFMA2, AVX-512 FP16) does two products where fp32 does one.
constexpr double kPacked16BitFactor = 2;
// fp32 emulated on tensor units: three TF32 products per fp32 product, TF32 at half the BF16 rate.
constexpr double kTensorFp32Divisor = 6;

// The narrowest input type decides: 16-bit inputs are what tensor units take.
DType NarrowestInput(const Task& task) {
  DType narrowest = DType::kFloat32;
  for (const auto& input : task.inputs) {
    if (DTypeBytes(input.dtype) < DTypeBytes(narrowest)) narrowest = input.dtype;
  }
  return narrowest;
}

}  // namespace

double ComputePeakGflops(const MeasuredPeaks& peaks, DType dtype) {
  if (DTypeBytes(dtype) == 2) {
    return peaks.tensor_16bit_gflops > 0
               ? std::max(peaks.tensor_16bit_gflops, kPacked16BitFactor * peaks.fp32_gflops)
               : kUnmeasured16BitFactor * peaks.fp32_gflops;
  }
  return std::max(peaks.fp32_gflops, peaks.tensor_16bit_gflops / kTensorFp32Divisor);
}

namespace {

void AddNote(StageDetails& details, const std::string& note) {
  details.note += (details.note.empty() ? "" : "; ") + note;
}

struct Limit {
  double bandwidth_gbps = 0;  // measured (or the baseline's rate), before the margin
  double gflops = 0;
  double floor_us = 0;        // with the margin
  std::string bound_by;
};

Limit LimitFor(const MeasuredPeaks& peaks, DType dtype, double bytes, double flops, double baseline_s, double margin) {
  Limit limit;
  // The trusted baseline cannot beat the device: if it ran faster than the measured peaks allow,
  // the measurement was low (a busy device when it was taken), and the limit follows the
  // baseline instead, so an honest kernel is never called a cheat for a stale measurement.
  limit.bandwidth_gbps = std::max(peaks.bandwidth_gbps, bytes / baseline_s / 1e9);
  limit.gflops = std::max(ComputePeakGflops(peaks, dtype), flops / baseline_s / 1e9);
  const double compute_us = flops / (margin * limit.gflops * 1e3);
  const double memory_us = bytes / (margin * limit.bandwidth_gbps * 1e3);
  limit.floor_us = std::max(compute_us, memory_us);
  limit.bound_by = memory_us >= compute_us ? "memory" : "compute";
  return limit;
}

}  // namespace

bool CheckPhysicalLimit(VerdictRecorder& recorder, Timing& timing, const Task& task, const DimValues& shape,
                        const MeasuredPeaks& peaks, const std::string& device,
                        const std::function<MeasuredPeaks()>& remeasure, double margin) {
  auto& stage = recorder.Stage(StageId::kPhysicalLimit);
  if (peaks.bandwidth_gbps <= 0 || peaks.fp32_gflops <= 0) {
    stage.details.summary = fmt::format("skipped: {} has no measured peaks (run `ksmith doctor`)", device);
    return true;
  }
  // Flops counted from a reference's operators may exceed what a correct kernel must do: no limit.
  const double flops = task.flops_are_minimum ? static_cast<double>(task.Flops(shape)) : 0.0;
  const double bytes = static_cast<double>(task.MinimumBytes(shape));
  const double baseline_s = timing.baseline_us.median * 1e-6;
  const DType dtype = NarrowestInput(task);
  Limit limit = LimitFor(peaks, dtype, bytes, flops, baseline_s, margin);
  MeasuredPeaks used = peaks;
  if (limit.floor_us > timing.candidate_us.median && remeasure) {
    // Before calling a time impossible, measure the peaks again, now: cached peaks taken while
    // the device was busy read low.
    const MeasuredPeaks fresh = remeasure();
    used.bandwidth_gbps = std::max(used.bandwidth_gbps, fresh.bandwidth_gbps);
    used.fp32_gflops = std::max(used.fp32_gflops, fresh.fp32_gflops);
    used.tensor_16bit_gflops = std::max(used.tensor_16bit_gflops, fresh.tensor_16bit_gflops);
    limit = LimitFor(used, dtype, bytes, flops, baseline_s, margin);
    AddNote(stage.details, fmt::format("{}'s peaks were measured again: {:.1f} GB/s, {:.0f} GFLOP/s", device,
                                       fresh.bandwidth_gbps, fresh.fp32_gflops));
  }
  timing.floor_us = limit.floor_us;
  timing.bound_by = limit.bound_by;
  timing.roofline_fraction = timing.floor_us / timing.candidate_us.median;
  stage.details.limit = PhysicalLimitFacts{timing.floor_us, timing.bound_by, margin * limit.bandwidth_gbps,
                                           margin * limit.gflops};
  if (margin != kPeakNoiseMargin) {
    AddNote(stage.details, fmt::format("other work disturbed the timing: the limit is {:.1f}x the measured peaks", margin));
  }
  if (limit.bandwidth_gbps > used.bandwidth_gbps || limit.gflops > ComputePeakGflops(used, dtype)) {
    AddNote(stage.details, fmt::format("the baseline beat {}'s measured peaks; they look low: run `ksmith doctor "
                                       "--refresh` when it is quiet", device));
  }
  if (timing.roofline_fraction > 1) {
    return recorder.Finish(stage, VerdictStatus::kIntegrityViolation,
                           fmt::format("measured {:.2f} us, but {} needs at least {:.2f} us to move {:.0f} bytes "
                                       "and do {:.0f} flops, even {:.0f}% above its measured peaks: the time is "
                                       "not real",
                                       timing.candidate_us.median, device, timing.floor_us, bytes, flops,
                                       100 * (margin - 1)),
                           FailureKind::kTimeNotReal);
  }
  stage.details.summary = fmt::format("{:.0f}% of the {} limit", 100 * timing.roofline_fraction, timing.bound_by);
  return true;
}

}  // namespace ksmith
