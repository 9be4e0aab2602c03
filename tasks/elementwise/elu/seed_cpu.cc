// Tuner seed for elu (alpha = 1): OpenMP threads over contiguous blocks.
// std::expm1 is a scalar library call the compiler cannot vectorize without -ffast-math; the
// polynomial expm1 below (Cephes' expf range reduction and polynomial, rearranged so that
// exp(x) - 1 never cancels, a few ulp) is plain arithmetic, so `omp simd` turns it into
// full-width vector code.
#include <bit>
#include <cmath>
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune POLY_EXPM1: 0, 1
#ifndef POLY_EXPM1
#define POLY_EXPM1 0
#endif

// @tune BLOCK: 16384, 262144
#ifndef BLOCK
#define BLOCK 262144
#endif

namespace {

constexpr float kAlpha = 1.0f;

// expm1(-|v|), in (-1, 0] (the caller selects x for a positive x). |v| is clamped to 87 on its
// bits (an integer select: a float compare and branch here would keep GCC from vectorizing the
// loop), where expm1 is -1 to float precision. With -|v| = k ln 2 + r, |r| <= ln 2 / 2:
// expm1 = 2^k expm1(r) + (2^k - 1), where expm1(r) = r + r^2 p(r) keeps its relative accuracy
// and 2^k - 1 is exact (or -1 to float precision for k < -24): no cancellation anywhere.
#pragma omp declare simd
inline float Expm1NegAbs(float v) {
  const uint32_t bits = std::bit_cast<uint32_t>(v) & 0x7fffffffu;
  const float a = std::bit_cast<float>((bits < 0x42ae0000u ? bits : 0x42ae0000u) | 0x80000000u);
  // k = round(a / ln 2), in [-126, 0]: floor(a * log2(e) + 0.5) by truncation and a correction
  // (std::floor is a library call here).
  const float fx = a * 1.44269504088896341f + 0.5f;
  const float kt = static_cast<float>(static_cast<int>(fx));
  const float kf = kt - (kt > fx ? 1.0f : 0.0f);
  const int k = static_cast<int>(kf);
  // r = a - k ln 2, with ln 2 split in two so the product is exact to float precision.
  const float r = (a - kf * 0.693359375f) + kf * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float em = p * (r * r) + r;                            // expm1(r)
  const float scale = std::bit_cast<float>((k + 127) << 23);  // 2^k
  return scale * em + (scale - 1.0f);
}

void EluRange(const float* x, float* y, int64_t begin, int64_t end) {
#if POLY_EXPM1
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float e = kAlpha * Expm1NegAbs(x[i]);  // computed for every x: a select, no branch
    y[i] = x[i] > 0.0f ? x[i] : e;
  }
#else
  for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : kAlpha * std::expm1(x[i]);
#endif
}

}  // namespace

extern "C" void elu(const float* x, float* y, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    EluRange(x, y, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
