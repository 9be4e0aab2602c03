#include "tensor/random.h"

#include <cmath>
#include <numbers>

namespace ksmith {
namespace {

constexpr double kLargeScale = 1000.0;
constexpr int kTiesHalfRange = 4;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double StandardNormal(uint64_t seed, uint64_t stream, uint64_t index) {
  // Box-Muller on two uniforms drawn from the element's own pair of counters.
  const double u1 = UniformOpen01(seed, stream, 2 * index);
  const double u2 = UniformOpen01(seed, stream, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
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

void FillRandom(float* data, size_t count, Distribution distribution, uint64_t seed,
                uint64_t stream) {
  for (size_t i = 0; i < count; ++i) {
    double value = 0;
    switch (distribution) {
      case Distribution::kNormal: value = StandardNormal(seed, stream, i); break;
      case Distribution::kUniform: value = 2.0 * UniformOpen01(seed, stream, i) - 1.0; break;
      case Distribution::kLarge: value = kLargeScale * StandardNormal(seed, stream, i); break;
      case Distribution::kPositive: value = UniformOpen01(seed, stream, i); break;
      case Distribution::kTies:
        value = static_cast<double>(
            static_cast<int>(MixCounter(seed, stream, i) % (2 * kTiesHalfRange + 1)) -
            kTiesHalfRange);
        break;
    }
    data[i] = static_cast<float>(value);
  }
}

}  // namespace ksmith
