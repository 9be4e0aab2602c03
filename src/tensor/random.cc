#include "tensor/random.h"

#include "core/target_clones.h"
#include "tensor/normal_sample.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace ksmith {
namespace {

constexpr float kLargeScale = 1000.0f;
constexpr int kTiesHalfRange = 4;
constexpr size_t kParallelFillThreshold = size_t{1} << 18;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Normal values: one counter hash per element, Box-Muller in float (tensor/normal_sample.h, which
// the GPU's generator shares, so both give the same bits).
KSMITH_WITH_AVX2_CLONE void FillNormal(float* data, size_t begin, size_t end, float scale, uint64_t seed, uint64_t stream) {
  const uint64_t stream_key = SplitMix64(seed ^ SplitMix64(stream));
  for (size_t i = begin; i < end; ++i) {
    const float value = normal_sample::StandardNormalFromBits(SplitMix64(stream_key + i));
    data[i] = normal_sample::MulRn(value, scale);
  }
}

void FillRange(float* data, size_t begin, size_t end, Distribution distribution, uint64_t seed,
               uint64_t stream) {
  if (distribution == Distribution::kNormal || distribution == Distribution::kLarge) {
    FillNormal(data, begin, end, distribution == Distribution::kLarge ? kLargeScale : 1.0f, seed, stream);
    return;
  }
  for (size_t i = begin; i < end; ++i) {
    double value = 0;
    switch (distribution) {
      case Distribution::kUniform: value = 2.0 * UniformOpen01(seed, stream, i) - 1.0; break;
      case Distribution::kPositive: value = UniformOpen01(seed, stream, i); break;
      case Distribution::kTies:
        value = static_cast<double>(
            static_cast<int>(MixCounter(seed, stream, i) % (2 * kTiesHalfRange + 1)) -
            kTiesHalfRange);
        break;
      default: break;
    }
    data[i] = static_cast<float>(value);
  }
}

}  // namespace

uint64_t MixCounter(uint64_t seed, uint64_t stream, uint64_t index) {
  return SplitMix64(SplitMix64(seed ^ SplitMix64(stream)) + index);
}

double UniformOpen01(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t bits = MixCounter(seed, stream, index) >> 11;  // 53 random bits
  return (static_cast<double>(bits) + 0.5) * 0x1p-53;
}

uint64_t DeriveSeed(uint64_t seed, uint64_t salt) { return MixCounter(seed, 0x5eed, salt); }

Result<Distribution> ParseDistribution(std::string_view name) {
  if (name == "normal") return Distribution::kNormal;
  if (name == "uniform") return Distribution::kUniform;
  if (name == "large") return Distribution::kLarge;
  if (name == "positive") return Distribution::kPositive;
  if (name == "ties") return Distribution::kTies;
  return MakeError(ErrorKind::kParse,
                   "unknown distribution '{}' (known: normal, uniform, large, positive, ties)", name);
}

const char* DistributionName(Distribution distribution) {
  switch (distribution) {
    case Distribution::kNormal: return "normal";
    case Distribution::kUniform: return "uniform";
    case Distribution::kLarge: return "large";
    case Distribution::kPositive: return "positive";
    case Distribution::kTies: return "ties";
  }
  return "?";
}

void FillInput(float* data, size_t count, const InputDraw& draw, Distribution case_distribution,
               uint64_t seed, uint64_t stream) {
  if (draw.integers) {
    const auto span = static_cast<uint64_t>(std::max<int64_t>(1, draw.integers->high - draw.integers->low));
    for (size_t i = 0; i < count; ++i) {
      data[i] = static_cast<float>(draw.integers->low + static_cast<int64_t>(MixCounter(seed, stream, i) % span));
    }
    return;
  }
  FillRandom(data, count, draw.own.value_or(case_distribution), seed, stream);
  if (draw.scale == 1.0 && draw.offset == 0.0 && !draw.nonnegative) return;
  const auto scale = static_cast<float>(draw.scale);
  const auto offset = static_cast<float>(draw.offset);
  for (size_t i = 0; i < count; ++i) {
    const float value = draw.nonnegative ? std::fabs(data[i]) : data[i];
    data[i] = offset + scale * value;
  }
}

void FillRandom(float* data, size_t count, Distribution distribution, uint64_t seed,
                uint64_t stream) {
  // Values depend only on their index, so large tensors are filled by several threads.
  const size_t threads = count < kParallelFillThreshold
                             ? 1
                             : std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  if (threads == 1) {
    FillRange(data, 0, count, distribution, seed, stream);
    return;
  }
  std::vector<std::thread> workers;
  const size_t chunk = (count / threads + 1) & ~size_t{1};
  for (size_t begin = 0; begin < count; begin += chunk) {
    workers.emplace_back(FillRange, data, begin, std::min(count, begin + chunk), distribution, seed,
                         stream);
  }
  for (auto& worker : workers) worker.join();
}

}  // namespace ksmith
