// Comparing a kernel's output with a double-precision reference.
//
// Two bounds, both scaled by the output's own magnitude so that zeros or a constant never pass:
//  - norm-wise:   ||got - ref|| / ||ref|| <= norm + eps * (4 * sqrt(n) + n / 4) + elem / sqrt(count)
//  - elementwise: |got_i - ref_i| <= (elem + eps * (16 * sqrt(n) + n)) * (|ref_i| + rms(ref))
// where n is the accumulation length. The sqrt term is the random-walk error of an honest fp32
// sum of random-signed terms; the linear term covers the systematic drift of a plain sequential
// sum of same-signed terms (softmax's denominator over 65537 tied values drifts by 2.8e-4 in
// fp32). Up to n of a few thousand the bound stays well below what half-precision inputs cost
// (about 3e-4), so precision downgrades still fail there; beyond n = 2^13 no bound can tell a
// plain fp32 sum from fp16 inputs, which is why tasks keep most accumulations shorter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tensor/dtype.h"

namespace ksmith {

/// Output buffers are filled with this NaN before each call; an element still holding exactly
/// these bits afterwards was never written.
inline constexpr uint32_t kPoisonBits = kPoisonPattern32;

struct Tolerance {
  double norm = 1e-5;  // norm-wise relative error at accumulation length 1
  double elem = 1e-4;  // elementwise error relative to |ref| + rms(ref)
  // Absolute error allowed per element, in units of eps times the inputs' RMS (at least eps):
  // for operations whose honest fp32 formula cancels where the answer is tiny (the erf form of
  // GELU far left of zero loses about eps * |x|, exp(x) - 1 about eps near 0). 0 for most tasks:
  // where outputs are far smaller than inputs (a softmax's), it would swamp the relative bounds.
  double noise = 0;
};

struct Comparison {
  bool passed = false;
  size_t count = 0;
  size_t unwritten = 0;         // elements still holding the poison bits
  size_t nonfinite = 0;         // NaN/Inf where the reference is finite
  size_t over_bound = 0;        // finite elements beyond the elementwise bound
  double norm_error = 0;        // ||got - ref|| / ||ref||
  double norm_bound = 0;        // includes the magnitude term, relative to ||ref||
  double elem_bound = 0;        // relative factor used for the elementwise bound
  double ref_rms = 0;
  size_t worst_index = 0;       // element with the largest error relative to its bound
  double worst_got = 0;
  double worst_ref = 0;
  double worst_abs_error = 0;

  /// One line for people and for model feedback.
  std::string Describe() const;
};

/// Compares `count` elements. `epsilon` is the unit roundoff of the kernel's dtype.
/// `magnitude_floor` keeps the scale from collapsing when the reference is (nearly) all zeros:
/// rms(ref) is taken as at least this. Callers pass epsilon times the inputs' RMS, the size of
/// rounding noise an honest kernel leaves where the exact answer underflows to zero.
///
/// `tolerance.noise` times max(`magnitude_floor`, `epsilon`) is allowed on every element as an
/// absolute error, and its root-sum-square on the whole output.
///
/// `magnitude`, when given, holds per element the size of what was summed (sum |terms|): a sum
/// that cancels keeps the rounding error of its terms, so each element may also be off by
/// 8 * eps * magnitude_i, and the whole output by 8 * eps * ||magnitude||. For outputs that do
/// not cancel this is a few eps of slack, far below what half precision costs.
Comparison CompareWithReference(const float* got, const double* ref, size_t count,
                                const Tolerance& tolerance, double epsilon, double accumulation,
                                double magnitude_floor = 0, const double* magnitude = nullptr);
/// The same, spread over the cores for outputs of millions of elements (the evaluator's checks:
/// never inside a worker, whose timed calls must have the machine). Below 4 Mi elements it is
/// CompareWithReference; above, its sums are taken in fixed blocks, so the result differs from
/// it only by the sums' rounding and is the same on every machine.
Comparison CompareWithReferenceOnCores(const float* got, const double* ref, size_t count,
                                       const Tolerance& tolerance, double epsilon, double accumulation,
                                       double magnitude_floor = 0, const double* magnitude = nullptr);
/// The same against a float reference (the baseline's output during timing).
Comparison CompareWithReference(const float* got, const float* ref, size_t count,
                                const Tolerance& tolerance, double epsilon, double accumulation,
                                double magnitude_floor = 0);

/// Root mean square of `count` floats (0 for none).
double RootMeanSquare(const float* values, size_t count);

}  // namespace ksmith
