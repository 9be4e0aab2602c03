// Vectorized OpenMP loop on all cores, as PyTorch eager's ATen GELU kernel does for bf16: each x
// widened to fp32, 0.5 x (1 + erf(x / sqrt 2)) in fp32, each y rounded once to bf16. std::erf does
// not vectorize, so erf is a branchless fp32 approximation (under 1 ulp, after N. Juffa) that
// gives 1 + erf(z) without cancellation for negative z.
#include <bit>
#include <cmath>
#include <cstdint>

namespace {

// e^z for -87 <= z <= 0 to about 1 ulp: z = k ln2 + r with |r| <= ln2 / 2, e^r by its Taylor
// series to r^7, times 2^k (normal, so no slow denormal arithmetic).
[[gnu::always_inline]] inline float ExpNonPositive(float z) {
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
  const float scale = std::bit_cast<float>((static_cast<int32_t>(k) + 127) << 23);
  return std::fma(em1, scale, scale);
}

// 1 + erf(z): a polynomial in z^2 for |z| <= 0.9277, else erfc(|z|) = e^q(|z|) with q a
// polynomial, giving 2 - erfc(z) for z > 0 and erfc(-z) itself for z < 0.
[[gnu::always_inline]] inline float OnePlusErf(float z) {
  const float t = std::fabs(z) < 8.8f ? std::fabs(z) : 8.8f;  // keeps q >= -84.1
  const float s = t * t;
  float q = std::fma(-1.72853470e-5f, t, 3.83197126e-4f);
  q = std::fma(q, s, std::fma(-3.88396438e-3f, t, 2.42546219e-2f));
  q = std::fma(q, t, -1.06777877e-1f);
  q = std::fma(q, t, -6.34846687e-1f);
  q = std::fma(q, t, -1.28717512e-1f);
  q = std::fma(q, t, -t);
  const float erfc_t = std::fabs(z) < 8.8f ? ExpNonPositive(q) : 0.0f;  // erfc(8.8) is 1.5e-35
  float p = -5.96761703e-4f;
  p = std::fma(p, s, 4.99119423e-3f);
  p = std::fma(p, s, -2.67681349e-2f);
  p = std::fma(p, s, 1.12819925e-1f);
  p = std::fma(p, s, -3.76125336e-1f);
  p = std::fma(p, s, 1.28379166e-1f);
  const float erf_small = std::fma(p, z, z);
  return t > 0.927734375f ? (z > 0.0f ? 2.0f - erfc_t : erfc_t) : 1.0f + erf_small;
}

}  // namespace

// 512-bit vectors where the CPU has them, as PyTorch's AVX512 kernels (g++ prefers 256 by default).
extern "C" [[gnu::target("prefer-vector-width=512")]] void gelu_bf16(const uint16_t* x, uint16_t* y,
                                                                     int64_t n) {
  const float inv_sqrt2 = 0.70710678118654752f;
#pragma omp parallel for simd schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::bit_cast<float>(static_cast<uint32_t>(x[i]) << 16);
    const uint32_t bits = std::bit_cast<uint32_t>(0.5f * v * OnePlusErf(v * inv_sqrt2));
    y[i] = static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);  // nearest even
  }
}
