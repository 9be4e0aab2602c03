// Vectorized OpenMP loop on all cores, as PyTorch eager's ATen softplus kernel (Sleef log1pf and
// expf). Not oneDNN's eltwise_soft_relu: for very negative x it returns up to 8e-6 where the
// answer is nearly 0.
#include <bit>
#include <cmath>
#include <cstdint>

namespace {

// e^z for z <= 0 to about 1 ulp, down to the denormals: z = k ln2 + r with |r| <= ln2 / 2, e^r
// by its Taylor series to r^7, times 2^k applied in two halves so each factor is normal.
[[gnu::always_inline]] inline float ExpNonPositive(float z) {
  z = z < -104.0f ? -104.0f : z;  // e^-104 is below half the smallest denormal
  const float k = (z * 1.44269504f + 12582912.0f) - 12582912.0f;  // round(z / ln2)
  float r = std::fma(k, -0.693145752f, z);
  r = std::fma(k, -1.42860677e-6f, r);
  float p = 1.0f / 5040.0f;
  p = std::fma(p, r, 1.0f / 720.0f);
  p = std::fma(p, r, 1.0f / 120.0f);
  p = std::fma(p, r, 1.0f / 24.0f);
  p = std::fma(p, r, 1.0f / 6.0f);
  p = std::fma(p, r, 0.5f);
  const float em1 = std::fma(p, r * r, r);
  const int32_t ki = static_cast<int32_t>(k);
  const int32_t k1 = ki / 2;
  const float scale1 = std::bit_cast<float>((k1 + 127) << 23);
  const float scale2 = std::bit_cast<float>((ki - k1 + 127) << 23);
  return std::fma(em1, scale1, scale1) * scale2;
}

// log1p(t) for t in [0, 1], as fdlibm: 1 + t = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)),
// log(1 + f) = f - (f^2/2 - s (f^2/2 + R(s^2))) with s = f / (2 + f), plus the rounding error of
// 1 + t, so tiny t keeps its relative accuracy.
[[gnu::always_inline]] inline float Log1pUnit(float t) {
  const float u = 1.0f + t;
  const float correction = (t - (u - 1.0f)) / u;
  const bool halve = u >= 1.41421356f;
  const float f = (halve ? 0.5f * u : u) - 1.0f;
  const float half_f2 = 0.5f * f * f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float p = 2.0f / 11.0f;
  p = std::fma(p, z, 2.0f / 9.0f);
  p = std::fma(p, z, 2.0f / 7.0f);
  p = std::fma(p, z, 2.0f / 5.0f);
  p = std::fma(p, z, 2.0f / 3.0f);
  const float log_1pf = f - (half_f2 - s * (half_f2 + z * p));
  const float exponent = halve ? 1.0f : 0.0f;
  return std::fma(exponent, 0.693145752f, log_1pf + std::fma(exponent, 1.42860677e-6f, correction));
}

}  // namespace

// beta = 1, threshold = 20: x above it, else log1p(e^x) in the stable form max(x, 0) + log1p(e^-|x|).
// 512-bit vectors where the CPU has them, as PyTorch's AVX512 kernels (g++ prefers 256 by default).
extern "C" [[gnu::target("prefer-vector-width=512")]] void softplus(const float* x, float* y, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float soft = (v > 0.0f ? v : 0.0f) + Log1pUnit(ExpNonPositive(-std::fabs(v)));
    y[i] = v > 20.0f ? v : soft;
  }
}
