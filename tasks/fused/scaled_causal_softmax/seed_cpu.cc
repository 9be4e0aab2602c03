// Tuner seed for scaled_causal_softmax: rows spread over OpenMP threads in interleaved chunks
// (row i of a head costs i + 1, so contiguous halves would be unbalanced); per row only the i + 1
// unmasked keys are read: a SIMD max, exp(0.125 x - max) stored in y while summing, a scale by
// 1/sum, then zeros for the masked keys. No temporary, no -inf. 0.125 is a power of two, so the
// max of the scaled row is exactly 0.125 times the max of the row.
// std::exp is a scalar library call the compiler cannot vectorize without -ffast-math; the
// polynomial exp below (range reduction by ln 2, degree-7 Taylor series, relative error about
// 1e-7) is plain arithmetic that `omp simd` turns into full-width vector code.
#include <cmath>
#include <cstdint>
#include <cstring>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune POLY_EXP: 0, 1
#ifndef POLY_EXP
#define POLY_EXP 0
#endif

namespace {

// exp(v) for v <= 0 (the row max is subtracted); below -87 it returns about 1e-38 instead of a
// smaller number, an absolute error no softmax output can see.
#pragma omp declare simd
inline float PolyExp(float v) {
  const float x = v < -87.0f ? -87.0f : v;
  // Round x / ln 2 to the nearest integer by adding and removing 1.5 * 2^23.
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;  // ln 2 in two parts
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) * (1 << 23);  // 2^n as a float
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

}  // namespace

extern "C" void scaled_causal_softmax(const float* x, float* y, int64_t heads, int64_t s) {
  const int64_t rows = heads * s;
#pragma omp parallel for schedule(static, 8) if (PARALLEL && rows > 1)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t valid = row % s + 1;  // keys 0..i
    const float* xr = x + row * s;
    float* yr = y + row * s;
    float mx = xr[0];
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < valid; ++j) mx = xr[j] > mx ? xr[j] : mx;
    const float m = 0.125f * mx;
    float sum = 0.0f;
#if POLY_EXP
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < valid; ++j) {
      yr[j] = PolyExp(0.125f * xr[j] - m);
      sum += yr[j];
    }
#else
    for (int64_t j = 0; j < valid; ++j) {
      yr[j] = std::exp(0.125f * xr[j] - m);
      sum += yr[j];
    }
#endif
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t j = 0; j < valid; ++j) yr[j] *= inv;
#pragma omp simd
    for (int64_t j = valid; j < s; ++j) yr[j] = 0.0f;
  }
}
