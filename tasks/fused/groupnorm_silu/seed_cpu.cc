// Tuner seed for groupnorm_silu: (sample, group) pairs spread over OpenMP threads; per group a
// two-pass mean and variance with SIMD partial sums over its contiguous cpg * hw elements (a
// float sum in a fixed order cannot be vectorized, these lanes can; double accumulation buys
// accuracy at half the vector width), then one pass per channel that normalizes, applies the
// affine and the silu and writes y: no temporary.
// std::exp is a scalar library call the compiler cannot vectorize without -ffast-math; the
// polynomial exp below (Cephes' expf: a two-part ln 2 range reduction, a degree-5 polynomial and
// 2^k from the exponent bits, about 1 ulp) is plain arithmetic, so `omp simd` turns it into
// full-width vector code. It only ever takes exp(-|t|), in (0, 1], so nothing overflows, and the
// sigmoid of a negative t is then exp(t) / (1 + exp(t)) without cancellation; silu = t * sigmoid.
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

// @tune ACC_TYPE: float, double
#ifndef ACC_TYPE
#define ACC_TYPE float
#endif

namespace {

// exp(-|v|), in (0, 1]. |v| is clamped to 87 on its bits (an integer select: a float compare
// and branch here would keep GCC from vectorizing the loop), so for |v| >= 87 this gives
// exp(-87) = 1.6e-38: v * 1.6e-38 for v <= -87 is tiny next to the error any fp32 silu is allowed.
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

// y = silu((x - mean) * scale + shift) over one channel's hw elements.
void NormalizeSilu(const float* x, float* y, int64_t hw, float mean, float scale, float shift) {
#if POLY_EXP
#pragma omp simd
  for (int64_t s = 0; s < hw; ++s) {
    const float t = (x[s] - mean) * scale + shift;
    const float e = ExpNegAbs(t);
    const float q = 1.0f / (1.0f + e);
    y[s] = t * (t >= 0.0f ? q : e * q);
  }
#else
  for (int64_t s = 0; s < hw; ++s) {
    const float t = (x[s] - mean) * scale + shift;
    y[s] = t / (1.0f + std::exp(-t));
  }
#endif
}

}  // namespace

extern "C" void groupnorm_silu(const float* x, const float* weight, const float* bias, float* y,
                               int64_t n, int64_t g, int64_t cpg, int64_t hw, int64_t c) {
  const int64_t size = cpg * hw;
  const int64_t groups = n * g;
#pragma omp parallel for schedule(static) if (PARALLEL && groups > 1)
  for (int64_t group = 0; group < groups; ++group) {
    const int64_t b = group / g;
    const int64_t k = group - b * g;
    const float* xg = x + (b * c + k * cpg) * hw;
    float* yg = y + (b * c + k * cpg) * hw;
    ACC_TYPE sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t e = 0; e < size; ++e) sum += xg[e];
    const float mean = static_cast<float>(sum / static_cast<ACC_TYPE>(size));
    ACC_TYPE squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t e = 0; e < size; ++e) {
      const float d = xg[e] - mean;
      squares += static_cast<ACC_TYPE>(d) * d;
    }
    const float variance = static_cast<float>(squares / static_cast<ACC_TYPE>(size));
    const float inv = 1.0f / std::sqrt(variance + 1e-5f);
    for (int64_t j = 0; j < cpg; ++j) {
      const int64_t ch = k * cpg + j;
      NormalizeSilu(xg + j * hw, yg + j * hw, hw, mean, inv * weight[ch], bias[ch]);
    }
  }
}
