// Comparing a kernel's output with a double-precision reference.
//
// Two bounds, both scaled by the output's own magnitude so that zeros or a constant never pass:
//  - norm-wise:   ||got - ref|| / ||ref|| <= norm + 4 * eps * sqrt(accumulation)
//  - elementwise: |got_i - ref_i| <= (elem + 16 * eps * sqrt(accumulation)) * (|ref_i| + rms(ref))
// The sqrt growth is the random-walk error of an honest fp32 sum of `accumulation` terms; a
// linear (worst-case) bound would let a half-precision kernel through on long reductions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ksmith {

/// Output buffers are filled with this NaN before each call; an element still holding exactly
/// these bits afterwards was never written.
inline constexpr uint32_t kPoisonBits = 0x7fc0dead;

struct Tolerance {
  double norm = 1e-5;  // norm-wise relative error at accumulation length 1
  double elem = 1e-4;  // elementwise error relative to |ref| + rms(ref)
};

struct Comparison {
  bool passed = false;
  size_t count = 0;
  size_t unwritten = 0;         // elements still holding the poison bits
  size_t nonfinite = 0;         // NaN/Inf where the reference is finite
  size_t over_bound = 0;        // finite elements beyond the elementwise bound
  double norm_error = 0;        // ||got - ref|| / ||ref||
  double norm_bound = 0;
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
Comparison CompareWithReference(const float* got, const double* ref, size_t count,
                                const Tolerance& tolerance, double epsilon, double accumulation);
/// The same against a float reference (the baseline's output during timing).
Comparison CompareWithReference(const float* got, const float* ref, size_t count,
                                const Tolerance& tolerance, double epsilon, double accumulation);

}  // namespace ksmith
