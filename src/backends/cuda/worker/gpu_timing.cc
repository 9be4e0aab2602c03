#include "backends/cuda/worker/gpu_timing.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "backends/cuda/worker/device_inputs.h"
#include "backends/cuda/worker/gpu_kernels.h"
#include "eval/statistics.h"
#include "tensor/compare.h"

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kBlockingTimeoutNs = 200'000'000;
constexpr double kWarmBatchTargetNs = 200'000;
constexpr int kWarmSamples = 5;
// Samples on inputs that barely changed since the call before, after the timed rounds.
constexpr int kReuseSamples = 5;
constexpr uint64_t kReuseSalt = 0x7e05e;
// The draws of inputs moved mid-round: far from every round's own, so no round repeats them.
constexpr uint64_t kMovedInputsRound = uint64_t{1} << 40;
// nvbench drops samples taken below 75% of the default clock; below 85% of the fastest clock
// seen in this run is stricter and needs no clock table.
constexpr double kThrottleFraction = 0.85;

Error CudaFailure(const char* what, cudaError_t error) {
  return Error{ErrorKind::kIo, fmt::format("{}: {} ({})", what, cudaGetErrorString(error),
                                           cudaGetErrorName(error))};
}

#define KS_TRY_CUDA(what, call)                                      \
  do {                                                              \
    if (cudaError_t status_ = (call); status_ != cudaSuccess) {     \
      return CudaFailure(what, status_);                             \
    }                                                               \
  } while (0)

uint64_t Mix(uint64_t value) {
  value += 0x9e3779b97f4a7c15ull;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ull;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebull;
  return value ^ (value >> 31);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

double RelativeStandardError(const std::vector<double>& values) {
  if (values.size() < 2) return 1;
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  double squares = 0;
  for (double value : values) squares += (value - mean) * (value - mean);
  const double deviation = std::sqrt(squares / (values.size() - 1));
  return mean > 0 ? deviation / std::sqrt(static_cast<double>(values.size())) / mean : 1;
}

// Where the timing call's time goes, phase by phase [us], for the verdict's worker_phase_ms.
class PhaseClock {
 public:
  explicit PhaseClock(Clock::time_point start) : last_(start) {}
  void Mark(const char* phase) {
    const auto now = Clock::now();
    phases_[phase] = std::chrono::duration<double, std::micro>(now - last_).count();
    last_ = now;
  }
  const nlohmann::json& phases() const { return phases_; }

 private:
  Clock::time_point last_;
  nlohmann::json phases_ = nlohmann::json::object();
};

struct Sample {
  double ns = 0;
  double clock_mhz = 0;  // 0: not measured
  bool blocked = false;  // the blocking kernel timed out: the call waited on its own queue
};

// Everything one sample needs, allocated once.
class Sampler {
 public:
  ~Sampler() {
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
    if (probe_) cudaFreeHost(const_cast<BlockingProbe*>(probe_));
    if (flush_) cudaFree(flush_);
  }

  Status Init(cudaStream_t stream, size_t flush_bytes, const int64_t* scalars) {
    stream_ = stream;
    scalars_ = scalars;
    flush_bytes_ = flush_bytes;
    KS_TRY_CUDA("event", cudaEventCreate(&start_));
    KS_TRY_CUDA("event", cudaEventCreate(&stop_));
    void* probe = nullptr;
    KS_TRY_CUDA("pinned probe", cudaHostAlloc(&probe, sizeof(BlockingProbe), cudaHostAllocMapped));
    probe_ = static_cast<volatile BlockingProbe*>(probe);
    void* device_probe = nullptr;
    KS_TRY_CUDA("probe mapping", cudaHostGetDevicePointer(&device_probe, probe, 0));
    device_probe_ = static_cast<volatile BlockingProbe*>(device_probe);
    if (flush_bytes_ > 0) KS_TRY_CUDA("L2 flush buffer", cudaMalloc(&flush_, flush_bytes_));
    return {};
  }

  Result<Sample> Run(CudaEntry entry, void* const* pointers, int batch, bool flush, uint64_t round,
                     CudaFinish finish = nullptr) {
    if (flush) {
      cudaCtxResetPersistingL2Cache();
      if (flush_) KS_TRY_CUDA("L2 flush", cudaMemsetAsync(flush_, static_cast<int>(round & 0xff), flush_bytes_, stream_));
    }
    probe_->released = 0;
    probe_->timed_out = 0;
    probe_->elapsed_ns = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (blocking_) KS_TRY_CUDA("blocking kernel", LaunchBlockingKernel(device_probe_, kBlockingTimeoutNs, stream_));
    KS_TRY_CUDA("event record", cudaEventRecord(start_, stream_));
    for (int i = 0; i < batch; ++i) entry(pointers, scalars_, stream_);
    KS_TRY_CUDA("event record", cudaEventRecord(stop_, stream_));
    if (finish != nullptr) finish(stream_);  // enqueued after the stop event: not timed
    std::atomic_thread_fence(std::memory_order_seq_cst);
    probe_->released = 1;
    KS_TRY_CUDA("kernel under timing", cudaEventSynchronize(stop_));
    // Device-wide: work the call left on other streams finishes before the next sample starts.
    KS_TRY_CUDA("kernel under timing", cudaDeviceSynchronize());
    Sample sample;
    sample.blocked = blocking_ && probe_->timed_out != 0;
    float elapsed_ms = 0;
    KS_TRY_CUDA("event time", cudaEventElapsedTime(&elapsed_ms, start_, stop_));
    sample.ns = static_cast<double>(elapsed_ms) * 1e6 / batch;
    if (blocking_ && probe_->elapsed_ns >= 5'000) {
      sample.clock_mhz = static_cast<double>(probe_->clock_ticks) * 1e3 / static_cast<double>(probe_->elapsed_ns);
    }
    return sample;
  }

  bool blocking() const { return blocking_; }
  void DisableBlocking() { blocking_ = false; }

 private:
  cudaStream_t stream_ = nullptr;
  const int64_t* scalars_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  volatile BlockingProbe* probe_ = nullptr;
  volatile BlockingProbe* device_probe_ = nullptr;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  bool blocking_ = true;
};

struct Side {
  const char* name;
  CudaEntry entry;
  CudaFinish finish;  // after each call, outside the timed events (the baseline's, where it has one)
  std::vector<void*> pointers;
  unsigned char* base;
  std::vector<Sample> samples;
  std::vector<double> reuse_ns;
  double warm_ns = 0;
  int warm_batch = 1;
};

// The same tensor of the baseline's private copy.
void* Translate(void* pointer, const unsigned char* from, unsigned char* to) {
  return pointer ? to + (static_cast<unsigned char*>(pointer) - from) : nullptr;
}

}  // namespace

GpuTimingConfig GpuTimingConfig::FromJson(const nlohmann::json& json) {
  GpuTimingConfig config;
  config.budget_s = json.value("budget_s", config.budget_s);
  config.min_rounds = json.value("min_rounds", config.min_rounds);
  config.max_rounds = json.value("max_rounds", config.max_rounds);
  config.target_rse = json.value("target_rse", config.target_rse);
  config.tie_band = json.value("tie_band", config.tie_band);
  config.flush_bytes = json.value("flush_bytes", config.flush_bytes);
  config.mutation_pairs = json.value("mutation_pairs", config.mutation_pairs);
  config.distribution = json.value("distribution", config.distribution);
  config.seed = json.value("seed", config.seed);
  config.final_seed = json.value("final_seed", config.final_seed);
  config.tolerance = json.value("tolerance", config.tolerance);
  config.scale = json.value("scale", config.scale);
  config.small_kernel_ns = json.value("small_kernel_ns", config.small_kernel_ns);
  return config;
}

Result<nlohmann::json> TimeOnGpu(DeviceCase& bench, CudaEntry candidate, CudaEntry baseline,
                                 cudaStream_t stream, cudaStream_t copy_stream,
                                 StreamMonitor& monitor, const GpuTimingConfig& config, CudaFinish baseline_finish,
                                 CudaFinish candidate_finish) {
  const auto started = Clock::now();
  PhaseClock phases(started);
  const CaseLayout& layout = bench.layout();
  unsigned char* baseline_base = nullptr;
  KS_TRY_CUDA("baseline's timing buffers", cudaMalloc(&baseline_base, bench.bytes()));
  unsigned long long* mismatches = nullptr;
  if (auto error = cudaMalloc(&mismatches, sizeof(unsigned long long)); error != cudaSuccess) {
    cudaFree(baseline_base);
    return CudaFailure("mismatch counter", error);
  }
  struct Cleanup {
    void* a;
    void* b;
    ~Cleanup() { cudaFree(a); cudaFree(b); }
  } cleanup{baseline_base, mismatches};
  KS_TRY_CUDA("counter", cudaMemsetAsync(mismatches, 0, sizeof(unsigned long long), stream));
  KS_TRY_CUDA("baseline copy", cudaMemcpyAsync(baseline_base, bench.device_base(), bench.bytes(),
                                               cudaMemcpyDeviceToDevice, stream));
  Side sides[2] = {{"candidate", candidate, candidate_finish, {}, bench.device_base(), {}, {}, 0, 1},
                   {"baseline", baseline, baseline_finish, {}, baseline_base, {}, {}, 0, 1}};
  for (size_t i = 0; i < layout.scalars.size(); ++i) {
    void* pointer = bench.device_pointers()[i];
    sides[0].pointers.push_back(pointer);
    sides[1].pointers.push_back(Translate(pointer, bench.device_base(), baseline_base));
  }
  auto tensor = [&](const Side& side, size_t slot) {
    return side.base + (bench.DeviceTensor(slot) - bench.device_base());
  };
  // The outputs, or the inputs that are drawn anew: a held input (a model's weight) keeps the
  // values the bench case gave it, in every round and in the last call, as weights do between calls.
  auto for_slots = [&](bool outputs, auto&& action) -> Status {
    for (size_t slot = 0; slot < layout.tensors.size(); ++slot) {
      if (layout.tensors[slot].output != outputs) continue;
      if (!outputs && layout.tensors[slot].draw.held) continue;
      if (auto status = action(slot, layout.tensors[slot].Elements()); !status.ok()) return status;
    }
    return {};
  };
  auto poison = [&](const Side& side) {
    return for_slots(true, [&](size_t slot, uint64_t) -> Status {
      const TensorSlot& tensor_slot = layout.tensors[slot];
      KS_TRY_CUDA("poison", LaunchFill(tensor(side, slot), tensor_slot.bytes, DTypePoisonPattern(tensor_slot.dtype),
                                       stream));
      return {};
    });
  };
  // Every timed round runs on inputs drawn afresh, every element: no earlier call saw them, and
  // no cache of earlier inputs or outputs, however it is keyed, saves any work.
  auto regenerate = [&](uint64_t round) {
    return for_slots(false, [&](size_t slot, uint64_t count) -> Status {
      const uint64_t seed = Mix(config.seed ^ (round * 1315423911ull));
      for (const Side& side : sides) {
        KS_TRY_CUDA("input generation", LaunchDrawnFill(layout.tensors[slot], tensor(side, slot), count,
                                                        config.distribution, seed, slot, stream));
      }
      return {};
    });
  };
  // A few swapped pairs: inputs that barely differ from the call before.
  auto mutate = [&](uint64_t round) {
    return for_slots(false, [&](size_t slot, uint64_t count) -> Status {
      const uint64_t seed = Mix(config.seed ^ kReuseSalt ^ (round * 1315423911ull + slot));
      for (const Side& side : sides) {
        KS_TRY_CUDA("input mutation", LaunchSwapMutation(tensor(side, slot), count,
                                                         DTypeBytes(layout.tensors[slot].dtype),
                                                         config.mutation_pairs, seed, stream));
      }
      return {};
    });
  };

  Sampler sampler;
  if (auto status = sampler.Init(stream, config.flush_bytes, bench.scalars()); !status.ok()) return status.error();
  monitor.Begin(stream, {copy_stream});
  phases.Mark("timing_setup");

  // Untimed first calls (lazy module loading, first-touch), then the scale of the outputs.
  for (const Side& side : sides) {
    side.entry(side.pointers.data(), bench.scalars(), stream);
    if (side.finish != nullptr) side.finish(stream);
  }
  KS_TRY_CUDA("first calls", cudaDeviceSynchronize());
  phases.Mark("timing_first_calls");
  // The outputs' root mean square, summed on the device: a copy of a bench-sized output to the
  // host cost more than the timed rounds together.
  std::vector<float> scales;
  double* squares = nullptr;
  KS_TRY_CUDA("output scale", cudaMalloc(&squares, sizeof(double)));
  struct FreeSquares {
    double* squares;
    ~FreeSquares() { cudaFree(squares); }
  } free_squares{squares};
  if (auto status = for_slots(true, [&](size_t slot, uint64_t count) -> Status {
        KS_TRY_CUDA("output scale", cudaMemsetAsync(squares, 0, sizeof(double), stream));
        KS_TRY_CUDA("output scale", LaunchSumOfSquares(ElementOf(layout.tensors[slot].dtype), tensor(sides[1], slot),
                                                       count, squares, stream));
        double sum = 0;
        KS_TRY_CUDA("output scale", cudaMemcpyAsync(&sum, squares, sizeof(sum), cudaMemcpyDeviceToHost, stream));
        KS_TRY_CUDA("output scale", cudaStreamSynchronize(stream));
        const double rms = count > 0 ? std::sqrt(sum / static_cast<double>(count)) : 0.0;
        scales.push_back(std::max<float>(config.scale, static_cast<float>(rms)));
        return {};
      });
      !status.ok()) {
    return status.error();
  }
  phases.Mark("timing_output_scale");

  // Counts, on the device, the candidate's output elements that differ from the baseline's.
  auto compare_outputs = [&]() -> Status {
    size_t slot_index = 0;
    return for_slots(true, [&](size_t slot, uint64_t count) -> Status {
      KS_TRY_CUDA("output comparison",
                  LaunchCompare(ElementOf(layout.tensors[slot].dtype), tensor(sides[0], slot), tensor(sides[1], slot),
                                count, config.tolerance, scales[slot_index++], mismatches, stream));
      return {};
    });
  };

  int rounds = 0;
  std::string stopped_by = "rounds";  // why the loop ended, for the verdict
  std::string blocking_note;
  while (true) {
    if (auto status = regenerate(rounds); !status.ok()) return status.error();
    for (const Side& side : sides) {
      if (auto status = poison(side); !status.ok()) return status.error();
    }
    const bool candidate_first = (Mix(config.seed + rounds) & 1) != 0;
    bool restarted = false;
    for (int k = 0; k < 2; ++k) {
      Side& side = sides[candidate_first ? k : 1 - k];
      // The first side's answer to these inputs is now on the device (its outputs, the blocks
      // its torch freed), where the candidate, in the same context, could read it: the second
      // side runs on new inputs, in either order (timing_driver.h's PlanRound), and the baseline
      // runs again, untimed, on the candidate's after both.
      if (k == 1) {
        if (auto status = regenerate(kMovedInputsRound + rounds); !status.ok()) return status.error();
      }
      auto sample = sampler.Run(side.entry, side.pointers.data(), 1, true, rounds, side.finish);
      if (!sample.ok()) return sample.error();
      if (sample->blocked) {
        // The call waited for its own stream (a synchronizing call inside it): the blocking
        // kernel would deadlock it, so time without one, launch latency included, from scratch.
        sampler.DisableBlocking();
        blocking_note = fmt::format("the {} synchronizes inside its call; samples include launch latency", side.name);
        for (Side& each : sides) each.samples.clear();
        rounds = 0;
        restarted = true;
        break;
      }
      side.samples.push_back(*sample);
    }
    // A round cut short has no pair of outputs of the same inputs (the baseline's may be of the
    // round's first inputs, the candidate's of the moved ones): comparing them would call an honest
    // kernel's output different, whichever side went first. The next round starts afresh.
    if (restarted) continue;
    if (!sides[0].samples.empty()) {
      // The candidate went first: its inputs again (the draw is the round's), for the baseline.
      if (candidate_first) {
        if (auto status = regenerate(rounds); !status.ok()) return status.error();
      }
      Side& baseline_side = sides[1];
      if (auto status = poison(baseline_side); !status.ok()) return status.error();
      baseline_side.entry(baseline_side.pointers.data(), bench.scalars(), stream);
      if (baseline_side.finish != nullptr) baseline_side.finish(stream);
    }
    if (auto status = compare_outputs(); !status.ok()) return status.error();
    ++rounds;
    if (sides[0].samples.empty()) continue;
    const double spent_s = std::chrono::duration<double>(Clock::now() - started).count();
    std::vector<double> times[2];
    for (int s = 0; s < 2; ++s) {
      for (const auto& sample : sides[s].samples) times[s].push_back(sample.ns);
    }
    const bool settled = RelativeStandardError(times[0]) <= config.target_rse &&
                         RelativeStandardError(times[1]) <= config.target_rse;
    // The interval costs a sort of every round's ratio: past 64 rounds it is asked every 16th.
    const bool ask = rounds >= config.min_rounds && (rounds < 64 || rounds % 16 == 0);
    const bool decided = ask && ComparisonDecided(PairedSpeedup(times[1], times[0]), config.tie_band);
    if (rounds >= config.max_rounds) break;
    if (rounds >= config.min_rounds && (decided || settled || spent_s >= config.budget_s)) {
      stopped_by = decided ? "decided" : settled ? "interval" : "budget";
      break;
    }
  }

  phases.Mark("timing_rounds");

  // The same cold samples on inputs that barely changed since the call before: an honest
  // kernel takes as long as on fresh inputs; one that remembers earlier calls and redoes only
  // what changed is faster here, and the evaluator says so.
  for (int i = 0; i < kReuseSamples; ++i) {
    if (auto status = mutate(rounds + i); !status.ok()) return status.error();
    for (Side& side : sides) {
      if (auto status = poison(side); !status.ok()) return status.error();
      auto sample = sampler.Run(side.entry, side.pointers.data(), 1, true, rounds + i, side.finish);
      if (!sample.ok()) return sample.error();
      side.reuse_ns.push_back(sample->ns);
    }
    if (auto status = compare_outputs(); !status.ok()) return status.error();
  }

  phases.Mark("timing_reuse");

  // Warm time: back-to-back calls without a flush; batched when a call is short.
  for (Side& side : sides) {
    std::vector<double> cold;
    for (const auto& sample : side.samples) cold.push_back(sample.ns);
    const double cold_median = Median(cold);
    side.warm_batch = cold_median < config.small_kernel_ns
                          ? std::clamp(static_cast<int>(std::ceil(kWarmBatchTargetNs / std::max(cold_median, 500.0))), 1, 1000)
                          : 1;
    side.entry(side.pointers.data(), bench.scalars(), stream);
    if (side.finish != nullptr) side.finish(stream);
    std::vector<double> warm;
    for (int i = 0; i < kWarmSamples; ++i) {
      auto sample = sampler.Run(side.entry, side.pointers.data(), side.warm_batch, false, rounds + i, side.finish);
      if (!sample.ok()) return sample.error();
      warm.push_back(sample->ns);
    }
    side.warm_ns = Median(warm);
  }

  phases.Mark("timing_warm");

  // A last untimed call on fresh inputs, left in place for the evaluator to check against the
  // reference: the outputs timed must be outputs of the inputs timed.
  if (config.final_seed == 0) {
    if (auto status = regenerate(rounds + kWarmSamples + 1); !status.ok()) return status.error();
  } else if (auto status = for_slots(false, [&](size_t slot, uint64_t count) -> Status {
               KS_TRY_CUDA("input generation",
                           LaunchDrawnFill(layout.tensors[slot], tensor(sides[0], slot), count, config.distribution,
                                           config.final_seed,
                                           static_cast<uint64_t>(layout.tensors[slot].parameter), stream));
               return {};
             });
             !status.ok()) {
    return status.error();
  }
  if (auto status = poison(sides[0]); !status.ok()) return status.error();
  candidate(sides[0].pointers.data(), bench.scalars(), stream);
  if (candidate_finish != nullptr) candidate_finish(stream);
  KS_TRY_CUDA("final call", cudaDeviceSynchronize());
  unsigned long long mismatch_count = 0;
  KS_TRY_CUDA("counter", cudaMemcpy(&mismatch_count, mismatches, sizeof(mismatch_count), cudaMemcpyDeviceToHost));
  phases.Mark("timing_final_call");
  StreamReport streams = monitor.Collect();
  phases.Mark("timing_stream_report");

  double fastest_clock = 0;
  for (const Side& side : sides) {
    for (const auto& sample : side.samples) fastest_clock = std::max(fastest_clock, sample.clock_mhz);
  }
  nlohmann::json reply = {{"rounds", rounds},
                          {"mismatched_elements", mismatch_count},
                          {"violations", streams.violations},
                          {"blocking_kernel", sampler.blocking()},
                          {"flush_bytes", config.flush_bytes},
                          {"stopped_by", stopped_by},
                          {"elapsed_s", std::chrono::duration<double>(Clock::now() - started).count()},
                          {"phase_us", phases.phases()}};
  if (!blocking_note.empty()) reply["note"] = blocking_note;
  for (const Side& side : sides) {
    std::vector<double> kept;
    std::vector<double> clocks;
    int throttled = 0;
    for (const auto& sample : side.samples) {
      if (sample.clock_mhz > 0 && sample.clock_mhz < kThrottleFraction * fastest_clock) {
        ++throttled;
        continue;
      }
      kept.push_back(sample.ns);
      if (sample.clock_mhz > 0) clocks.push_back(sample.clock_mhz);
    }
    reply[side.name] = {{"cold_ns", kept},
                        {"throttled_samples", throttled},
                        {"clock_mhz_median", Median(clocks)},
                        {"warm_ns", side.warm_ns},
                        {"reuse_ns", side.reuse_ns},
                        {"warm_batch", side.warm_batch}};
  }
  return reply;
}

}  // namespace ksmith
