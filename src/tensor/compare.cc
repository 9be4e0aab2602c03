#include "tensor/compare.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

namespace ksmith {
namespace {

constexpr double kMagnitudeFactor = 8.0;  // times eps, on sum |terms|

template <typename Reference>
Comparison Compare(const float* got, const Reference* ref, size_t count, const Tolerance& tolerance,
                   double epsilon, double accumulation, double magnitude_floor,
                   const double* magnitude) {
  Comparison result;
  result.count = count;
  const double length = std::max(1.0, accumulation);
  result.norm_bound = tolerance.norm + epsilon * (4.0 * std::sqrt(length) + length / 4.0);
  result.elem_bound = tolerance.elem + epsilon * (16.0 * std::sqrt(length) + length);

  double ref_square_sum = 0;
  for (size_t i = 0; i < count; ++i) {
    if (std::isfinite(ref[i])) ref_square_sum += ref[i] * ref[i];
  }
  result.ref_rms = std::max(count > 0 ? std::sqrt(ref_square_sum / static_cast<double>(count)) : 0.0,
                            magnitude_floor);
  // On a handful of elements the norm-wise error is just the worst element's, so it may reach
  // the elementwise bound (the naive erf-form GELU loses 4e-5 near x = -3); on large outputs
  // this term vanishes.
  if (count > 0) result.norm_bound += result.elem_bound / std::sqrt(static_cast<double>(count));

  double error_square_sum = 0;
  double worst_ratio = -1;
  for (size_t i = 0; i < count; ++i) {
    const double expected = ref[i];
    const float value = got[i];
    double ratio = 0;
    if (std::isfinite(value) && std::isfinite(expected)) {
      // The common case first: both finite.
      const double error = std::fabs(static_cast<double>(value) - expected);
      error_square_sum += error * error;
      const double bound = result.elem_bound * (std::fabs(expected) + result.ref_rms) +
                           (magnitude ? kMagnitudeFactor * epsilon * std::fabs(magnitude[i]) : 0.0);
      ratio = bound > 0 ? error / bound : (error > 0 ? INFINITY : 0);
      if (error > bound) ++result.over_bound;
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
      result.worst_got = value;
      result.worst_ref = expected;
      result.worst_abs_error = std::fabs(static_cast<double>(value) - expected);
    }
  }
  const double ref_norm = std::max(std::sqrt(ref_square_sum),
                                   magnitude_floor * std::sqrt(static_cast<double>(count)));
  double magnitude_allowance = 0;  // absolute, on ||got - ref||
  if (magnitude != nullptr) {
    double magnitude_square_sum = 0;
    for (size_t i = 0; i < count; ++i) magnitude_square_sum += magnitude[i] * magnitude[i];
    magnitude_allowance = kMagnitudeFactor * epsilon * std::sqrt(magnitude_square_sum);
  }
  const double error_norm = std::sqrt(error_square_sum);
  const bool norm_ok = error_norm <= result.norm_bound * ref_norm + magnitude_allowance;
  if (ref_norm > 0) result.norm_bound += magnitude_allowance / ref_norm;
  result.norm_error = ref_norm > 0 ? error_norm / ref_norm : (error_norm > 0 ? INFINITY : 0);
  result.passed = result.unwritten == 0 && result.nonfinite == 0 && result.over_bound == 0 && norm_ok;
  return result;
}

}  // namespace

Comparison CompareWithReference(const float* got, const double* ref, size_t count,
                                const Tolerance& tolerance, double epsilon, double accumulation,
                                double magnitude_floor, const double* magnitude) {
  return Compare(got, ref, count, tolerance, epsilon, accumulation, magnitude_floor, magnitude);
}

Comparison CompareWithReference(const float* got, const float* ref, size_t count,
                                const Tolerance& tolerance, double epsilon, double accumulation,
                                double magnitude_floor) {
  return Compare(got, ref, count, tolerance, epsilon, accumulation, magnitude_floor, nullptr);
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
