// Tuner seed for softplus (beta = 1, threshold = 20): OpenMP threads over contiguous blocks.
// std::exp and std::log1p are scalar library calls the compiler cannot vectorize without
// -ffast-math. The polynomial form below is plain arithmetic, so `omp simd` turns it into
// full-width vector code: softplus(x) = max(x, 0) + log1p(exp(-|x|)), where exp only sees
// -|x| <= 0 (nothing overflows) and log1p only sees (0, 1] (Cephes' expf and logf polynomials,
// a few ulp).
#include <bit>
#include <cmath>
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune POLY_LOG_EXP: 0, 1
#ifndef POLY_LOG_EXP
#define POLY_LOG_EXP 0
#endif

// @tune BLOCK: 16384, 262144
#ifndef BLOCK
#define BLOCK 262144
#endif

namespace {

constexpr float kThreshold = 20.0f;

// exp(-|v|), in (0, 1]. |v| is clamped to 87 on its bits (an integer select: a float compare
// and branch here would keep GCC from vectorizing the loop), so for |v| >= 87 this gives
// exp(-87) = 1.6e-38, and log1p of it is far below any error an fp32 softplus is allowed.
#pragma omp declare simd
inline float ExpNegAbs(float v) {
  const uint32_t bits = std::bit_cast<uint32_t>(v) & 0x7fffffffu;
  const float a = std::bit_cast<float>(bits < 0x42ae0000u ? bits : 0x42ae0000u);  // 87.0f
  // k = round(-a / ln 2), in [-126, 0]: floor(-a * log2(e) + 0.5) by truncation and a correction
  // (std::floor is a library call here).
  const float fx = a * -1.44269504088896341f + 0.5f;
  const float kt = static_cast<float>(static_cast<int>(fx));
  const float kf = kt - (kt > fx ? 1.0f : 0.0f);
  const int k = static_cast<int>(kf);
  // r = -a - k ln 2, with ln 2 split in two so the product is exact to float precision.
  const float r = (-a - kf * 0.693359375f) + kf * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  return p * std::bit_cast<float>((k + 127) << 23);  // p * 2^k
}

// log1p(u) for u in (0, 1]. w = 1 + u is in (1, 2]: log(w) = k ln 2 + log(m) with m = w or w / 2
// in [sqrt(1/2), sqrt(2)], log(m) from Cephes' logf polynomial in m - 1. The rounding of 1 + u is
// undone by the factor u / (w - 1) (w - 1 is exact); where w rounds to 1, log1p(u) = u.
#pragma omp declare simd
inline float Log1pUnit(float u) {
  const float w = 1.0f + u;
  const bool high = w > 1.41421356f;
  const float m = high ? 0.5f * w : w;
  const float kf = high ? 1.0f : 0.0f;
  const float z = m - 1.0f;
  const float z2 = z * z;
  float p = 7.0376836292e-2f;
  p = p * z - 1.1514610310e-1f;
  p = p * z + 1.1676998740e-1f;
  p = p * z - 1.2420140846e-1f;
  p = p * z + 1.4249322787e-1f;
  p = p * z - 1.6668057665e-1f;
  p = p * z + 2.0000714765e-1f;
  p = p * z - 2.4999993993e-1f;
  p = p * z + 3.3333331174e-1f;
  float y = p * z * z2 + kf * -2.12194440e-4f;
  y = y - 0.5f * z2;
  const float log_w = (z + y) + kf * 0.693359375f;
  const float d = w - 1.0f;
  const float corrected = log_w * (u / (d == 0.0f ? 1.0f : d));
  return d == 0.0f ? u : corrected;
}

void SoftplusRange(const float* x, float* y, int64_t begin, int64_t end) {
#if POLY_LOG_EXP
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float v = x[i];
    const float s = (v > 0.0f ? v : 0.0f) + Log1pUnit(ExpNegAbs(v));
    y[i] = v > kThreshold ? v : s;
  }
#else
  for (int64_t i = begin; i < end; ++i) {
    y[i] = x[i] > kThreshold ? x[i] : std::log1p(std::exp(x[i]));
  }
#endif
}

}  // namespace

extern "C" void softplus(const float* x, float* y, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    SoftplusRange(x, y, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
