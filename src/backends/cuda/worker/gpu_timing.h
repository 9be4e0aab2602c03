// The nvbench method, candidate and baseline interleaved: before each sample the persisting L2
// is reset and a buffer of twice the L2 is written; the sample waits behind a blocking kernel
// until all of it is queued, so launch latency is not counted; CUDA events time it; the SM clock
// is read during the blocking kernel and throttled samples are dropped; sampling stops once the
// comparison is decided (tie_band), the relative standard error is below target, or the budget
// is spent. Every round first draws every
// input element afresh on the device and poisons the outputs, and afterwards compares the
// candidate's output with the baseline's on the GPU, so a kernel that skips, caches or counts
// calls while timed is seen. A few more samples follow on inputs that barely changed since the
// call before (a few swapped pairs): a kernel faster there remembers earlier calls.
#pragma once

#include <cuda_runtime.h>

#include <nlohmann/json.hpp>

#include "backends/cuda/worker/device_case.h"
#include "backends/cuda/worker/stream_monitor.h"
#include "core/result.h"

namespace ksmith {

struct GpuTimingConfig {
  double budget_s = 1.0;
  int min_rounds = 10;
  int max_rounds = 5000;
  double target_rse = 0.005;
  /// > 0: stop once the paired speedup's interval is clear of 1 or inside 1 +- tie_band
  /// (eval/statistics.h's ComparisonDecided); the budget stays the cap.
  double tie_band = 0;
  size_t flush_bytes = 0;      // >= 2x L2
  int mutation_pairs = 4;      // per input tensor per sample on barely changed inputs
  int distribution = 0;        // the inputs' (tensor/random.h's Distribution, as an index)
  uint64_t seed = 0;
  /// Nonzero: the last, checked call runs on inputs drawn from this seed, with each tensor's
  /// parameter index as its stream: the inputs tensor/random.h's FillRandom gives the evaluator,
  /// which then has the reference's answer ready before timing ends.
  uint64_t final_seed = 0;
  float tolerance = 0;         // elementwise, relative to |baseline| + scale
  float scale = 0;             // floor for the output's RMS
  double small_kernel_ns = 20'000;  // below this, warm time uses back-to-back batches

  static GpuTimingConfig FromJson(const nlohmann::json& json);
};

/// Times `candidate` on `bench` (its device memory) and `baseline` on a private copy. Leaves
/// the candidate's last output and its inputs (drawn from `final_seed` when given) in `bench`'s
/// device memory. The reply
/// holds per-side samples [ns], clocks, warm times, mismatching rounds and stream violations.
Result<nlohmann::json> TimeOnGpu(DeviceCase& bench, CudaEntry candidate, CudaEntry baseline,
                                 cudaStream_t stream, cudaStream_t copy_stream,
                                 StreamMonitor& monitor, const GpuTimingConfig& config,
                                 CudaFinish baseline_finish = nullptr, CudaFinish candidate_finish = nullptr);

}  // namespace ksmith
