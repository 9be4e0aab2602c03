// Tuner seed for softmax_bf16: rows spread over OpenMP threads; per row the bf16 values are
// widened into a per-thread fp32 buffer (a shift: SIMD), then a SIMD max, exp(x - max) stored in
// the buffer while summing in fp32, then a scale by 1/sum rounded to bf16 (integer round to
// nearest even: SIMD). std::exp is a scalar library call the compiler cannot vectorize without
// -ffast-math; the polynomial exp below (range reduction by ln 2, degree-7 Taylor series,
// relative error about 1e-7) is plain arithmetic that `omp simd` turns into full-width vector
// code.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune POLY_EXP: 0, 1
#ifndef POLY_EXP
#define POLY_EXP 1
#endif

namespace {

// exp(v) for v <= 0 (softmax subtracts the row max); below -87 it returns about 1e-38 instead
// of a smaller number, an absolute error no softmax output can see.
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

#pragma omp declare simd
inline float Widen(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

// Round to nearest even; softmax outputs are finite and in [0, 1].
#pragma omp declare simd
inline uint16_t ToBf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace

extern "C" void softmax_bf16(const uint16_t* x, uint16_t* y, int64_t rows, int64_t cols) {
#pragma omp parallel if (PARALLEL && rows > 1)
  {
    std::vector<float> buffer(static_cast<size_t>(cols));
    float* e = buffer.data();
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const uint16_t* xr = x + r * cols;
      uint16_t* yr = y + r * cols;
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) e[c] = Widen(xr[c]);
      float mx = e[0];
#pragma omp simd reduction(max : mx)
      for (int64_t c = 0; c < cols; ++c) mx = e[c] > mx ? e[c] : mx;
      float sum = 0.0f;
#if POLY_EXP
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < cols; ++c) {
        e[c] = PolyExp(e[c] - mx);
        sum += e[c];
      }
#else
      for (int64_t c = 0; c < cols; ++c) {
        e[c] = std::exp(e[c] - mx);
        sum += e[c];
      }
#endif
      const float inv = 1.0f / sum;
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) yr[c] = ToBf16(e[c] * inv);
    }
  }
}
