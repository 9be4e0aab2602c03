// Tuner seed for gelu_bf16 (exact erf form): OpenMP threads over contiguous blocks; each x widened
// to fp32 (a shift), GELU in fp32, each y rounded once to bf16 (integer round to nearest even).
// std::erf is a scalar library call the compiler cannot vectorize without -ffast-math; the
// rational approximation below (Eigen's and XLA's fast erf, |error| < 5e-7 against the exact
// erf, far below bf16's rounding) is plain arithmetic, so `omp simd` turns it into full-width
// vector code.
#include <bit>
#include <cmath>
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune RATIONAL_ERF: 0, 1
#ifndef RATIONAL_ERF
#define RATIONAL_ERF 1
#endif

// @tune BLOCK: 16384, 262144
#ifndef BLOCK
#define BLOCK 262144
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

#pragma omp declare simd
inline float Widen(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

// Round to nearest even (the inputs are finite, so are the results).
#pragma omp declare simd
inline uint16_t ToBf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

void GeluRange(const uint16_t* x, uint16_t* y, int64_t begin, int64_t end) {
  const float inv_sqrt2 = 0.70710678118654752f;
#if RATIONAL_ERF
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float v = Widen(x[i]);
    y[i] = ToBf16(0.5f * v * (1.0f + RationalErf(v * inv_sqrt2)));
  }
#else
  for (int64_t i = begin; i < end; ++i) {
    const float v = Widen(x[i]);
    y[i] = ToBf16(0.5f * v * (1.0f + std::erf(v * inv_sqrt2)));
  }
#endif
}

}  // namespace

extern "C" void gelu_bf16(const uint16_t* x, uint16_t* y, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    GeluRange(x, y, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
