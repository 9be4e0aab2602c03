// One normal sample from one 64-bit counter hash, computed the same way, bit for bit, on the host
// (tensor/random.cc) and on the GPU (backends/cuda/worker/gpu_kernels.cu): Box-Muller in float with
// polynomial log, sine and cosine, every operation either exact or a single IEEE rounding (an
// explicit fma, a product, a quotient, a square root), so no math library and no compiler's
// choice of contraction can make the two disagree. Why not libm: the double Box-Muller with
// glibc's log and sincos was 42% of a cpu correctness run's samples under perf (sincos 20%, log
// 9%; docs/benchmarks.md); these polynomials vectorize.
//
// Every product here is rounded on its own (MulRn) and every sum of a product is an explicit fma.
// Host files that include this header must be compiled with -ffp-contract=off, since GCC may
// fuse a product into a later sum on its own; the device side uses __fmul_rn, which nvcc never
// fuses.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

// Always inlined: on the host the caller is built for AVX2 and FMA (a target clone), and only
// code inlined into it uses those instructions.
#if defined(__CUDACC__)
#define KSMITH_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define KSMITH_HOST_DEVICE inline __attribute__((always_inline))
#endif

namespace ksmith::normal_sample {

KSMITH_HOST_DEVICE float MulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

KSMITH_HOST_DEVICE float Fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

KSMITH_HOST_DEVICE uint32_t BitsOf(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

KSMITH_HOST_DEVICE float FloatOf(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

// log(k * 2^-24) for an integer k in [1, 2^24] (Cephes' logf polynomial, about 1 ulp): k is
// exact as a float; its exponent and mantissa split it as m * 2^e with m in [sqrt(1/2), sqrt(2)).
KSMITH_HOST_DEVICE float LogOfScaledInteger(uint32_t k) {
  // Converted as a signed integer (k < 2^31): AVX2 has no unsigned conversion to vectorize.
  const uint32_t bits = BitsOf(static_cast<float>(static_cast<int32_t>(k)));
  const float mantissa = FloatOf((bits & 0x007fffffu) | 0x3f800000u);  // in [1, 2)
  // Branch-free, so that the host's loop vectorizes: halving is exact.
  const bool high = mantissa > 1.41421356f;
  const float halved = MulRn(mantissa, 0.5f);  // computed either way: a select vectorizes
  const float m = high ? halved : mantissa;
  const int exponent = static_cast<int>(bits >> 23) - 127 - 24 + (high ? 1 : 0);
  const float x = m - 1.0f;  // exact (Sterbenz)
  const float z = MulRn(x, x);
  float p = 7.0376836292e-2f;
  p = Fma(p, x, -1.1514610310e-1f);
  p = Fma(p, x, 1.1676998740e-1f);
  p = Fma(p, x, -1.2420140846e-1f);
  p = Fma(p, x, 1.4249322787e-1f);
  p = Fma(p, x, -1.6668057665e-1f);
  p = Fma(p, x, 2.0000714765e-1f);
  p = Fma(p, x, -2.4999993993e-1f);
  p = Fma(p, x, 3.3333331174e-1f);
  float y = MulRn(MulRn(p, x), z);
  y = Fma(-0.5f, z, y);
  const float e = static_cast<float>(exponent);  // exact
  // e * ln2 in two parts, as Cephes does, so the sum keeps the polynomial's accuracy.
  y = Fma(e, -2.12194440e-4f, y);
  return Fma(e, 0.693359375f, x + y);
}

/// A standard normal value from 64 random bits: 24 bits make the radius, 24 the angle. The
/// radius is at most sqrt(2 ln 2^24) = 5.77 (a sample of a few million values reaches about 5.3).
KSMITH_HOST_DEVICE float StandardNormalFromBits(uint64_t bits) {
  const uint32_t radius_bits = static_cast<uint32_t>(bits >> 40);           // 24 bits
  const uint32_t angle_bits = static_cast<uint32_t>(bits >> 16) & 0xffffffu;  // 24 bits
  // u1 = (radius_bits + 1) / 2^24 in (0, 1]; radius = sqrt(-2 log u1).
  const float log_u1 = LogOfScaledInteger(radius_bits + 1);
  const float radius = sqrtf(MulRn(-2.0f, log_u1));
  // The angle: a quadrant (2 bits) and phi uniform in (-pi/4, pi/4) from the other 22, at the
  // centres of 2^22 equal steps: (2f + 1 - 2^22) is an exact odd integer, scaled once.
  const uint32_t quadrant = angle_bits >> 22;
  const int32_t odd = 2 * static_cast<int32_t>(angle_bits & 0x3fffffu) + 1 - (1 << 22);
  const float phi = MulRn(static_cast<float>(odd), 1.87253514e-7f);  // (pi/2) / 2^23
  const float z = MulRn(phi, phi);
  // Cephes' sinf and cosf polynomials on [-pi/4, pi/4].
  float s = Fma(-1.9515295891e-4f, z, 8.3321608736e-3f);
  s = Fma(s, z, -1.6666654611e-1f);
  const float sine = Fma(MulRn(s, z), phi, phi);
  float c = Fma(2.443315711809948e-5f, z, -1.388731625493765e-3f);
  c = Fma(c, z, 4.166664568298827e-2f);
  const float cosine = Fma(MulRn(c, z), z, Fma(-0.5f, z, 1.0f));
  // cos(quadrant * pi/2 + phi): cos, -sin, -cos, sin; the sign flips for quadrants 1 and 2.
  const float value = (quadrant & 1) ? sine : cosine;
  const uint32_t sign = (((quadrant + 1) >> 1) & 1u) << 31;
  return MulRn(radius, FloatOf(BitsOf(value) ^ sign));
}

}  // namespace ksmith::normal_sample
