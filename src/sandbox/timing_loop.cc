#include "sandbox/timing_loop.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "tensor/compare.h"

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;

// Stream ids keep the timing inputs and their mutations independent of each other.
constexpr uint64_t kSetStreamBase = 1'000'000;
constexpr uint64_t kMutationPositionStream = 2'000'000;
constexpr uint64_t kMutationValueStream = 3'000'000;
constexpr uint64_t kOrderStream = 4'000'000;

struct RoundBuffers {
  std::vector<std::span<float>> inputs;  // into the shared input block
  std::vector<std::vector<float>> candidate_outputs;
  std::vector<std::vector<float>> baseline_outputs;
  std::vector<void*> candidate_pointers;
  std::vector<void*> baseline_pointers;
};

double RelativeStandardError(const std::vector<double>& samples) {
  const double n = static_cast<double>(samples.size());
  if (n < 2) return INFINITY;
  double mean = 0;
  for (double sample : samples) mean += sample;
  mean /= n;
  double variance = 0;
  for (double sample : samples) variance += (sample - mean) * (sample - mean);
  variance /= n - 1;
  return mean > 0 ? std::sqrt(variance / n) / mean : INFINITY;
}

double TimeCall(KernelEntry entry, void* const* pointers, const int64_t* scalars) {
  const auto start = Clock::now();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  entry(pointers, scalars);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

}  // namespace

size_t TimingInputBytes(const CaseLayout& layout, size_t sets) {
  size_t bytes = 0;
  for (const auto& slot : layout.tensors) bytes += slot.output ? 0 : slot.bytes;
  return bytes * sets;
}

void FillTimingInputs(const CaseLayout& layout, size_t sets, Distribution distribution,
                      uint64_t seed, float* inputs) {
  for (size_t set = 0; set < sets; ++set) {
    for (size_t t = 0; t < layout.tensors.size(); ++t) {
      const auto& slot = layout.tensors[t];
      if (slot.output) continue;
      const size_t count = slot.bytes / sizeof(float);
      FillRandom(inputs, count, distribution, seed, kSetStreamBase + set * 64 + t);
      inputs += count;
    }
  }
}

nlohmann::json RunTimingLoop(const nlohmann::json& request, float* inputs, KernelEntry candidate,
                             KernelEntry baseline) {
  auto layout = CaseLayout::FromJson(request);
  if (!layout.ok()) return {{"error", layout.error().message}};
  if (candidate == nullptr || baseline == nullptr) return {{"error", "kernels not loaded"}};
  const size_t sets = request.value("sets", size_t{1});
  const uint64_t seed = request.value("seed", uint64_t{1});
  const auto distribution = ParseDistribution(request.value("distribution", std::string("normal")));
  const size_t mutations = request.value("mutations", size_t{16});
  const size_t min_rounds = request.value("min_rounds", size_t{5});
  const size_t max_rounds = request.value("max_rounds", size_t{1000});
  const double min_time_s = request.value("min_time_s", 0.05);
  const double max_time_s = request.value("max_time_s", 1.0);
  const double target_rse = request.value("target_rse", 0.01);
  const auto& tolerance_json = request.at("tolerance");
  const Tolerance tolerance{tolerance_json.value("norm", 1e-5), tolerance_json.value("elem", 1e-4)};
  const double epsilon = tolerance_json.value("epsilon", 0x1p-24);
  const double accumulation = tolerance_json.value("accumulation", 1.0);

  const auto setup_start = Clock::now();
  std::vector<RoundBuffers> buffers(sets);
  for (size_t set = 0; set < sets; ++set) {
    auto& round = buffers[set];
    round.candidate_pointers.assign(layout->scalars.size(), nullptr);
    round.baseline_pointers.assign(layout->scalars.size(), nullptr);
    for (size_t t = 0; t < layout->tensors.size(); ++t) {
      const auto& slot = layout->tensors[t];
      const size_t count = slot.bytes / sizeof(float);
      if (slot.output) {
        // Poisoned once: a kernel that writes nothing leaves NaN behind and fails the check.
        auto& got = round.candidate_outputs.emplace_back(count);
        auto& expected = round.baseline_outputs.emplace_back(count);
        FillPattern(reinterpret_cast<unsigned char*>(got.data()), slot.bytes, kPoisonBits);
        FillPattern(reinterpret_cast<unsigned char*>(expected.data()), slot.bytes, kPoisonBits);
        round.candidate_pointers[slot.parameter] = got.data();
        round.baseline_pointers[slot.parameter] = expected.data();
      } else {
        round.inputs.emplace_back(inputs, count);
        round.candidate_pointers[slot.parameter] = inputs;
        round.baseline_pointers[slot.parameter] = inputs;
        inputs += count;
      }
    }
  }

  // One untimed call each: first-touch page faults and OpenMP thread start-up.
  candidate(buffers[0].candidate_pointers.data(), layout->scalars.data());
  baseline(buffers[0].baseline_pointers.data(), layout->scalars.data());

  const double setup_s = std::chrono::duration<double>(Clock::now() - setup_start).count();
  std::vector<double> candidate_ns;
  std::vector<double> baseline_ns;
  nlohmann::json mismatch;
  const auto loop_start = Clock::now();
  for (size_t round = 0; round < max_rounds; ++round) {
    auto& set = buffers[round % sets];
    for (size_t i = 0; i < set.inputs.size(); ++i) {
      auto& input = set.inputs[i];
      for (size_t m = 0; m < mutations && !input.empty(); ++m) {
        const size_t position = MixCounter(seed, kMutationPositionStream + i, round * mutations + m) % input.size();
        float value = 0;
        FillRandom(&value, 1, distribution.ok() ? *distribution : Distribution::kNormal,
                   MixCounter(seed, kMutationValueStream + i, round * mutations + m), 0);
        input[position] = value;
      }
    }
    const bool candidate_first = (MixCounter(seed, kOrderStream, round) & 1) == 0;
    if (candidate_first) {
      candidate_ns.push_back(TimeCall(candidate, set.candidate_pointers.data(), layout->scalars.data()));
      baseline_ns.push_back(TimeCall(baseline, set.baseline_pointers.data(), layout->scalars.data()));
    } else {
      baseline_ns.push_back(TimeCall(baseline, set.baseline_pointers.data(), layout->scalars.data()));
      candidate_ns.push_back(TimeCall(candidate, set.candidate_pointers.data(), layout->scalars.data()));
    }
    for (size_t o = 0; o < set.candidate_outputs.size(); ++o) {
      const auto& expected = set.baseline_outputs[o];
      // Both sides are fp32 here, so each may carry its own rounding: twice the bounds.
      const Tolerance doubled{2 * tolerance.norm, 2 * tolerance.elem};
      const Comparison comparison = CompareWithReference(
          set.candidate_outputs[o].data(), expected.data(), expected.size(), doubled, 2 * epsilon,
          accumulation);
      if (!comparison.passed) {
        mismatch = {{"round", round}, {"output", o}, {"description", comparison.Describe()}};
        break;
      }
    }
    if (!mismatch.is_null()) break;
    const double elapsed_s = std::chrono::duration<double>(Clock::now() - loop_start).count();
    const bool enough = candidate_ns.size() >= min_rounds && elapsed_s >= min_time_s;
    const bool quiet = RelativeStandardError(candidate_ns) <= target_rse &&
                       RelativeStandardError(baseline_ns) <= target_rse;
    if ((enough && quiet) || (elapsed_s >= max_time_s && candidate_ns.size() >= min_rounds)) break;
  }
  nlohmann::json result = {{"candidate_ns", candidate_ns}, {"baseline_ns", baseline_ns},
                           {"rounds", candidate_ns.size()}, {"sets", sets}, {"setup_s", setup_s},
                           {"loop_s", std::chrono::duration<double>(Clock::now() - loop_start).count()}};
  if (!mismatch.is_null()) result["mismatch"] = mismatch;
  return result;
}

}  // namespace ksmith
