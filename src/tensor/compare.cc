#include "tensor/compare.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/parallel.h"
#include "core/target_clones.h"

namespace ksmith {
namespace {

constexpr double kMagnitudeFactor = 8.0;  // times eps, on sum |terms|

constexpr size_t kLanes = 8;      // independent partial sums, so the loops vectorize
constexpr size_t kChunk = 4096;   // elements per block whose largest ratio is kept
// Elements a thread judges at once where an output is spread over the cores (a multiple of kChunk).
constexpr size_t kParallelBlock = size_t{1} << 22;

struct Bounds {
  double elem_bound = 0;
  double ref_rms = 0;
  double magnitude_term = 0;  // kMagnitudeFactor * epsilon, or 0 without magnitudes
  double noise = 0;           // absolute, on every element
};

// An element's error over its bound; both values finite. The quotient is computed whatever the
// bound and then selected, so that the lanes calling it vectorize without a branch.
template <typename Reference>
inline __attribute__((always_inline)) double FiniteRatio(float value, Reference expected, const Bounds& bounds,
                                                         const double* magnitude, size_t i, double* error_out,
                                                         bool* over_out) {
  const double error = std::fabs(static_cast<double>(value) - expected);
  const double bound = bounds.elem_bound * (std::fabs(static_cast<double>(expected)) + bounds.ref_rms) +
                       (magnitude ? bounds.magnitude_term * std::fabs(magnitude[i]) : 0.0) + bounds.noise;
  *error_out = error;
  *over_out = error > bound;
  const double quotient = error / bound;
  return bound > 0 ? quotient : (error > 0 ? INFINITY : 0);
}

template <typename Reference>
inline __attribute__((always_inline)) bool IsFinite(Reference value) {
  return std::fabs(static_cast<double>(value)) <= std::numeric_limits<double>::max();
}

// The element-by-element judgement, for outputs with NaN, Inf or unwritten elements.
template <typename Reference>
void CompareElementwise(const float* got, const Reference* ref, size_t count, const Bounds& bounds,
                        const double* magnitude, Comparison& result, double& error_square_sum,
                        double& worst_ratio) {
  worst_ratio = -1;
  for (size_t i = 0; i < count; ++i) {
    const double expected = ref[i];
    const float value = got[i];
    double ratio = 0;
    if (std::isfinite(value) && std::isfinite(expected)) {
      double error = 0;
      bool over = false;
      ratio = FiniteRatio(value, ref[i], bounds, magnitude, i, &error, &over);
      error_square_sum += error * error;
      result.over_bound += over;
    } else if (std::bit_cast<uint32_t>(value) == kPoisonBits) {
      ++result.unwritten;
      ratio = INFINITY;
    } else if (!std::isfinite(expected)) {
      // Non-finite references must be matched exactly in kind.
      const bool same = (std::isnan(expected) && std::isnan(value)) ||
                        (std::isinf(expected) && value == static_cast<float>(expected));
      if (!same) {
        ++result.nonfinite;
        ratio = INFINITY;
      }
    } else {
      ++result.nonfinite;  // the kernel produced NaN or Inf where the reference is finite
      ratio = INFINITY;
    }
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      result.worst_index = i;
    }
  }
}

// The same judgement where every element is finite on both sides (checked before): lanes of
// partial sums and, per chunk, the largest ratio, so that the compiler vectorizes it; the
// worst element is then found again in its chunk (the first with the largest ratio, as above).
template <typename Reference>
KSMITH_WITH_AVX2_CLONE void CompareFinite(const float* got, const Reference* ref, size_t count, const Bounds& bounds,
                                          const double* magnitude, Comparison& result, double& error_square_sum,
                                          double& worst_ratio) {
  double squares[kLanes] = {};
  size_t over[kLanes] = {};
  worst_ratio = -1;
  size_t worst_chunk = 0;
  for (size_t chunk = 0; chunk < count; chunk += kChunk) {
    const size_t end = std::min(count, chunk + kChunk);
    double largest[kLanes];
    std::fill(largest, largest + kLanes, -1.0);
    size_t i = chunk;
    for (; i + kLanes <= end; i += kLanes) {
      for (size_t lane = 0; lane < kLanes; ++lane) {
        double error = 0;
        bool over_bound = false;
        const double ratio = FiniteRatio(got[i + lane], ref[i + lane], bounds, magnitude, i + lane, &error, &over_bound);
        squares[lane] += error * error;
        over[lane] += over_bound;
        largest[lane] = std::max(largest[lane], ratio);
      }
    }
    for (; i < end; ++i) {
      double error = 0;
      bool over_bound = false;
      const double ratio = FiniteRatio(got[i], ref[i], bounds, magnitude, i, &error, &over_bound);
      squares[0] += error * error;
      over[0] += over_bound;
      largest[0] = std::max(largest[0], ratio);
    }
    const double chunk_largest = *std::max_element(largest, largest + kLanes);
    if (chunk_largest > worst_ratio) {
      worst_ratio = chunk_largest;
      worst_chunk = chunk;
    }
  }
  for (size_t lane = 0; lane < kLanes; ++lane) {
    error_square_sum += squares[lane];
    result.over_bound += over[lane];
  }
  for (size_t i = worst_chunk; i < std::min(count, worst_chunk + kChunk); ++i) {
    double error = 0;
    bool over_bound = false;
    if (FiniteRatio(got[i], ref[i], bounds, magnitude, i, &error, &over_bound) == worst_ratio) {
      result.worst_index = i;
      break;
    }
  }
}

// One pass for the reference's size (its finite elements) and for the count of elements that
// are not finite on either side.
template <typename Reference>
KSMITH_WITH_AVX2_CLONE size_t ScanValues(const float* got, const Reference* ref, size_t count,
                                         double& ref_square_sum) {
  double ref_squares[kLanes] = {};
  size_t nonfinite[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (size_t lane = 0; lane < kLanes; ++lane) {
      const bool finite_ref = IsFinite(ref[i + lane]);
      const double expected = finite_ref ? static_cast<double>(ref[i + lane]) : 0.0;
      ref_squares[lane] += expected * expected;
      nonfinite[lane] += !finite_ref || !IsFinite(got[i + lane]);
    }
  }
  for (; i < count; ++i) {
    const bool finite_ref = IsFinite(ref[i]);
    const double expected = finite_ref ? static_cast<double>(ref[i]) : 0.0;
    ref_squares[0] += expected * expected;
    nonfinite[0] += !finite_ref || !IsFinite(got[i]);
  }
  size_t any_nonfinite = 0;
  for (size_t lane = 0; lane < kLanes; ++lane) {
    ref_square_sum += ref_squares[lane];
    any_nonfinite += nonfinite[lane];
  }
  return any_nonfinite;
}

template <typename Reference>
Comparison Compare(const float* got, const Reference* ref, size_t count, const Tolerance& tolerance,
                   double epsilon, double accumulation, double magnitude_floor,
                   const double* magnitude, bool parallel) {
  Comparison result;
  result.count = count;
  const double length = std::max(1.0, accumulation);
  result.norm_bound = tolerance.norm + epsilon * (4.0 * std::sqrt(length) + length / 4.0);
  result.elem_bound = tolerance.elem + epsilon * (16.0 * std::sqrt(length) + length);

  // Fixed blocks, so that the sums' order, and with it every bit of the result, is the same
  // however many threads ran them; one block (the whole output) below kParallelBlock.
  const size_t blocks = parallel && count > kParallelBlock ? (count + kParallelBlock - 1) / kParallelBlock : 1;
  const size_t block_size = blocks == 1 ? count : kParallelBlock;
  const auto block_begin = [&](size_t block) { return block * block_size; };
  const auto block_count = [&](size_t block) { return std::min(count, (block + 1) * block_size) - block * block_size; };
  std::vector<double> block_ref_squares(blocks, 0.0);
  std::vector<size_t> block_nonfinite(blocks, 0);
  ParallelFor(blocks, [&](size_t block) {
    block_nonfinite[block] = ScanValues(got + block_begin(block), ref + block_begin(block), block_count(block),
                                        block_ref_squares[block]);
  });
  double ref_square_sum = 0;
  for (const double squares : block_ref_squares) ref_square_sum += squares;
  result.ref_rms = std::max(count > 0 ? std::sqrt(ref_square_sum / static_cast<double>(count)) : 0.0,
                            magnitude_floor);
  // On a handful of elements the norm-wise error is just the worst element's, so it may reach
  // the elementwise bound (the naive erf-form GELU loses 4e-5 near x = -3); on large outputs
  // this term vanishes.
  if (count > 0) result.norm_bound += result.elem_bound / std::sqrt(static_cast<double>(count));

  // In units of eps times the inputs' RMS, or of eps where the inputs are smaller than 1: an
  // elementwise formula's intermediates (exp(x) in exp(x) - 1) are of size 1 on tiny inputs.
  const double noise = tolerance.noise * std::max(magnitude_floor, epsilon);
  const Bounds bounds{result.elem_bound, result.ref_rms, magnitude ? kMagnitudeFactor * epsilon : 0.0, noise};
  std::vector<Comparison> block_results(blocks);
  std::vector<double> block_error_squares(blocks, 0.0);
  std::vector<double> block_worst(blocks, -1.0);
  ParallelFor(blocks, [&](size_t block) {
    const size_t begin = block_begin(block);
    const double* block_magnitude = magnitude ? magnitude + begin : nullptr;
    // Only outputs with a NaN, an Inf or an unwritten element need the element-by-element loop.
    const auto judge = block_nonfinite[block] > 0 ? CompareElementwise<Reference> : CompareFinite<Reference>;
    judge(got + begin, ref + begin, block_count(block), bounds, block_magnitude, block_results[block],
          block_error_squares[block], block_worst[block]);
  });
  double error_square_sum = 0;
  double worst_ratio = -1;
  for (size_t block = 0; block < blocks; ++block) {
    const Comparison& part = block_results[block];
    error_square_sum += block_error_squares[block];
    result.over_bound += part.over_bound;
    result.unwritten += part.unwritten;
    result.nonfinite += part.nonfinite;
    if (block_worst[block] > worst_ratio) {  // the first element with the largest ratio
      worst_ratio = block_worst[block];
      result.worst_index = block_begin(block) + part.worst_index;
    }
  }
  if (count > 0) {
    result.worst_got = got[result.worst_index];
    result.worst_ref = static_cast<double>(ref[result.worst_index]);
    result.worst_abs_error = std::fabs(static_cast<double>(result.worst_got) - result.worst_ref);
  }
  const double ref_norm = std::max(std::sqrt(ref_square_sum),
                                   magnitude_floor * std::sqrt(static_cast<double>(count)));
  double absolute_allowance = noise * std::sqrt(static_cast<double>(count));  // absolute, on ||got - ref||
  if (magnitude != nullptr) {
    double magnitude_square_sum = 0;
    for (size_t m = 0; m < count; ++m) magnitude_square_sum += magnitude[m] * magnitude[m];
    absolute_allowance += kMagnitudeFactor * epsilon * std::sqrt(magnitude_square_sum);
  }
  const double error_norm = std::sqrt(error_square_sum);
  const bool norm_ok = error_norm <= result.norm_bound * ref_norm + absolute_allowance;
  if (ref_norm > 0) result.norm_bound += absolute_allowance / ref_norm;
  result.norm_error = ref_norm > 0 ? error_norm / ref_norm : (error_norm > 0 ? INFINITY : 0);
  result.passed = result.unwritten == 0 && result.nonfinite == 0 && result.over_bound == 0 && norm_ok;
  return result;
}

}  // namespace

Comparison CompareWithReference(const float* got, const double* ref, size_t count,
                                const Tolerance& tolerance, double epsilon, double accumulation,
                                double magnitude_floor, const double* magnitude) {
  return Compare(got, ref, count, tolerance, epsilon, accumulation, magnitude_floor, magnitude, false);
}

Comparison CompareWithReferenceOnCores(const float* got, const double* ref, size_t count, const Tolerance& tolerance,
                                       double epsilon, double accumulation, double magnitude_floor,
                                       const double* magnitude) {
  return Compare(got, ref, count, tolerance, epsilon, accumulation, magnitude_floor, magnitude, true);
}

Comparison CompareWithReference(const float* got, const float* ref, size_t count,
                                const Tolerance& tolerance, double epsilon, double accumulation,
                                double magnitude_floor) {
  return Compare(got, ref, count, tolerance, epsilon, accumulation, magnitude_floor, nullptr, false);
}

double RootMeanSquare(const float* values, size_t count) {
  double sum = 0;
  for (size_t i = 0; i < count; ++i) {
    if (std::isfinite(values[i])) sum += static_cast<double>(values[i]) * values[i];
  }
  return count > 0 ? std::sqrt(sum / static_cast<double>(count)) : 0;
}

std::string Comparison::Describe() const {
  if (passed) {
    return fmt::format("matches: norm-wise relative error {:.3g} (bound {:.3g})", norm_error,
                       norm_bound);
  }
  std::string text;
  if (unwritten > 0) {
    text += fmt::format("{} of {} output elements were never written; ", unwritten, count);
  }
  if (nonfinite > 0) text += fmt::format("{} elements are NaN or Inf where the reference is finite; ", nonfinite);
  if (over_bound > 0) {
    text += fmt::format("{} of {} elements exceed the elementwise bound; ", over_bound, count);
  }
  text += fmt::format(
      "norm-wise relative error {:.3g} (bound {:.3g}); worst element [{}]: got {:.9g}, expected "
      "{:.9g} (|error| {:.3g})",
      norm_error, norm_bound, worst_index, worst_got, worst_ref, worst_abs_error);
  return text;
}

}  // namespace ksmith
