// Counter-based random numbers: value i of a stream depends only on (seed, stream, i), so inputs
// can be generated in any order, in parallel, in the parent or the worker, and always agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/result.h"

namespace ksmith {

/// splitmix64 finaliser over the counter: a bijective mixer with good avalanche.
uint64_t MixCounter(uint64_t seed, uint64_t stream, uint64_t index);

/// Uniform in the open interval (0, 1).
double UniformOpen01(uint64_t seed, uint64_t stream, uint64_t index);

/// Derives an independent seed, e.g. for case k of an evaluation.
uint64_t DeriveSeed(uint64_t seed, uint64_t salt);

enum class Distribution { kNormal, kUniform, kLarge, kPositive, kTies };

Result<Distribution> ParseDistribution(std::string_view name);
const char* DistributionName(Distribution distribution);

/// Fills `data[0..count)` with values of `distribution`, from counter stream `stream`.
void FillRandom(float* data, size_t count, Distribution distribution, uint64_t seed,
                uint64_t stream);

/// How one input's values are drawn: by default the case's distribution. An input may fix its own
/// (a model's weights keep their initialisation's family and scale, whatever the case draws) and
/// keep to its domain (an input that is never negative stays non-negative).
/// Integers drawn uniformly from [low, high): an index input (a class label, a mask of 0 and 1).
struct IntegerRange {
  int64_t low = 0;
  int64_t high = 1;  // exclusive
  bool operator==(const IntegerRange&) const = default;
};

/// The widest integer range: every value must be exact as a float (FillInput's element type).
inline constexpr int64_t kMaxIntegerSpan = int64_t{1} << 24;

struct InputDraw {
  std::optional<Distribution> own;  // instead of the case's
  double scale = 1.0;               // value = offset + scale * draw
  double offset = 0.0;
  bool nonnegative = false;         // |draw| before scale and offset
  /// A module's parameter (a weight): the same values in every call at a shape, as a model's
  /// weights are between calls, drawn from the verification's seed instead of each case's.
  bool held = false;
  /// Integers instead of any distribution: low + MixCounter(seed, stream, i) % (high - low),
  /// the same on the host and the GPU. Set per case (the bound may be a dim).
  std::optional<IntegerRange> integers;

  bool IsDefault() const { return !own && scale == 1.0 && offset == 0.0 && !nonnegative && !held && !integers; }
  bool operator==(const InputDraw&) const = default;
};

/// FillRandom under `draw`, with `case_distribution` where the input has none of its own; an
/// integer draw gives integer-valued floats (exact: the span is at most kMaxIntegerSpan).
void FillInput(float* data, size_t count, const InputDraw& draw, Distribution case_distribution,
               uint64_t seed, uint64_t stream);

}  // namespace ksmith
