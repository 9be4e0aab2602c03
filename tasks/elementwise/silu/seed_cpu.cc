// Tuner seed for silu: OpenMP threads over contiguous blocks.
// std::exp is a scalar library call the compiler cannot vectorize without -ffast-math; the
// polynomial exp below (Cephes' expf: a two-part ln 2 range reduction, a degree-5 polynomial and
// 2^k from the exponent bits, about 1 ulp) is plain arithmetic, so `omp simd` turns it into
// full-width vector code. It only ever takes exp(-|x|), in (0, 1], so nothing overflows, and the
// sigmoid of a negative x is then exp(x) / (1 + exp(x)) without cancellation; y = x * sigmoid(x).
#include <bit>
#include <cmath>
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune POLY_EXP: 0, 1
#ifndef POLY_EXP
#define POLY_EXP 0
#endif

// @tune BLOCK: 16384, 262144
#ifndef BLOCK
#define BLOCK 262144
#endif

namespace {

// exp(-|v|), in (0, 1]. |v| is clamped to 87 on its bits (an integer select: a float compare
// and branch here would keep GCC from vectorizing the loop), so for |v| >= 87 this gives
// exp(-87) = 1.6e-38: x * 1.6e-38 for x <= -87 is tiny next to the error any fp32 silu is allowed.
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

void SiluRange(const float* x, float* y, int64_t begin, int64_t end) {
#if POLY_EXP
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float e = ExpNegAbs(x[i]);
    const float r = 1.0f / (1.0f + e);
    y[i] = x[i] * (x[i] >= 0.0f ? r : e * r);
  }
#else
  for (int64_t i = begin; i < end; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
#endif
}

}  // namespace

extern "C" void silu(const float* x, float* y, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    SiluRange(x, y, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
