// Tuner seed for tanh: OpenMP threads over contiguous blocks.
// std::tanh is a scalar library call the compiler cannot vectorize without -ffast-math; the
// polynomial form below (Cephes' tanhf: an odd polynomial for |x| < 0.625, else
// (1 - e) / (1 + e) with e = exp(-2|x|) from a Cephes expf, both a few ulp) is plain arithmetic,
// so `omp simd` turns it into full-width vector code. exp only ever sees -2|x| <= 0, so nothing
// overflows and large |x| saturates to +-1.
#include <bit>
#include <cmath>
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune POLY_TANH: 0, 1
#ifndef POLY_TANH
#define POLY_TANH 0
#endif

// @tune BLOCK: 16384, 262144
#ifndef BLOCK
#define BLOCK 262144
#endif

namespace {

// exp(-|v|), in (0, 1]. |v| is clamped to 87 on its bits (an integer select: a float compare
// and branch here would keep GCC from vectorizing the loop), so for |v| >= 87 this gives
// exp(-87) = 1.6e-38, and (1 - e) / (1 + e) rounds to 1 long before that.
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

// tanh(v) for every finite float. Both branches are computed and one selected, which the
// vectorizer needs; for |v| >= 0.625, e <= exp(-1.25) = 0.29, so 1 - e does not cancel.
#pragma omp declare simd
inline float PolyTanh(float v) {
  const float a = std::fabs(v);
  const float e = ExpNegAbs(2.0f * a);
  const float big = (1.0f - e) / (1.0f + e);
  const float s = v * v;
  float p = -5.70498872745e-3f;
  p = p * s + 2.06390887954e-2f;
  p = p * s - 5.37397155531e-2f;
  p = p * s + 1.33314422036e-1f;
  p = p * s - 3.33332819422e-1f;
  const float small = p * s * v + v;
  return a < 0.625f ? small : (v < 0.0f ? -big : big);
}

void TanhRange(const float* x, float* y, int64_t begin, int64_t end) {
#if POLY_TANH
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] = PolyTanh(x[i]);
#else
  for (int64_t i = begin; i < end; ++i) y[i] = std::tanh(x[i]);
#endif
}

}  // namespace

extern "C" void tanh_forward(const float* x, float* y, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    TanhRange(x, y, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
