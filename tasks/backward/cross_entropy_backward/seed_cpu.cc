// Tuner seed for cross_entropy_backward: rows spread over OpenMP threads; per row a SIMD max,
// exp(x - max) stored in dlogits while summing it and the targets, then
// dlogits = (e / sum * sum(target) - target) / rows in place. std::exp is a scalar library call the
// compiler cannot vectorize without -ffast-math; the polynomial exp below (range reduction by
// ln 2, degree-7 Taylor series, relative error about 1e-7) is plain arithmetic that `omp simd`
// turns into full-width vector code.
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
// smaller number, an absolute error no gradient here can see. PolyExp(0) is exactly 1.
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

extern "C" void cross_entropy_backward(const float* logits, const float* target, float* dlogits,
                                       int64_t rows, int64_t classes) {
  const float inv_rows = 1.0f / static_cast<float>(rows);
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    float* dr = dlogits + r * classes;
    float mx = xr[0];
#pragma omp simd reduction(max : mx)
    for (int64_t c = 0; c < classes; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float sum = 0.0f;
    float target_sum = 0.0f;
#if POLY_EXP
#pragma omp simd reduction(+ : sum, target_sum)
    for (int64_t c = 0; c < classes; ++c) {
      dr[c] = PolyExp(xr[c] - mx);
      sum += dr[c];
      target_sum += tr[c];
    }
#else
    for (int64_t c = 0; c < classes; ++c) {
      dr[c] = std::exp(xr[c] - mx);
      sum += dr[c];
    }
#pragma omp simd reduction(+ : target_sum)
    for (int64_t c = 0; c < classes; ++c) target_sum += tr[c];
#endif
    // p * sum(target) = e * scale; for classes = 1, e = sum = 1 and target_sum = target, so the
    // result is exactly 0.
    const float scale = target_sum / sum;
#pragma omp simd
    for (int64_t c = 0; c < classes; ++c) dr[c] = (dr[c] * scale - tr[c]) * inv_rows;
  }
}
