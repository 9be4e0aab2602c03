// Tuner seed for gelu_backward (exact erf form): OpenMP threads over contiguous blocks.
// std::erf and std::exp are scalar library calls the compiler cannot vectorize without
// -ffast-math; with FAST_MATH 1 they are replaced by plain arithmetic that `omp simd` turns into
// full-width vector code: a rational erf (Eigen's and XLA's, |error| < 5e-7 against the exact
// erf) and a polynomial exp (range reduction by ln 2, degree-7 Taylor series, relative error about
// 1e-7).
#include <cmath>
#include <cstdint>
#include <cstring>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune FAST_MATH: 1, 0
#ifndef FAST_MATH
#define FAST_MATH 1
#endif

// @tune BLOCK: 16384, 262144
#ifndef BLOCK
#define BLOCK 16384
#endif

namespace {

// erf(v) for every float: beyond |v| = 4 erf is +-1 to float precision.
#pragma omp declare simd
inline float RationalErf(float v) {
  const float x = v < -4.0f ? -4.0f : (v > 4.0f ? 4.0f : v);
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return x * p / q;
}

// exp(v) for v <= 0; below -87 it returns about 1e-38 instead of a smaller number, an absolute
// error no gradient here can see (it is multiplied by x and dy of ordinary size).
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

constexpr float kAlpha = 0.70710678118654752f;  // 1 / sqrt(2)
constexpr float kBeta = 0.39894228040143268f;   // 1 / sqrt(2 pi)

void GeluBackwardRange(const float* x, const float* dy, float* dx, int64_t begin, int64_t end) {
#if FAST_MATH
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float v = x[i];
    const float cdf = 0.5f * (1.0f + RationalErf(v * kAlpha));
    const float pdf = kBeta * PolyExp(-0.5f * v * v);
    dx[i] = dy[i] * (cdf + v * pdf);
  }
#else
  for (int64_t i = begin; i < end; ++i) {
    const float v = x[i];
    const float cdf = 0.5f * (1.0f + std::erf(v * kAlpha));
    const float pdf = kBeta * std::exp(-0.5f * v * v);
    dx[i] = dy[i] * (cdf + v * pdf);
  }
#endif
}

}  // namespace

extern "C" void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    GeluBackwardRange(x, dy, dx, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
