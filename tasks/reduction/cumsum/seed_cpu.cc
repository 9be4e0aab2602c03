// Tuner seed for cumsum: rows spread over OpenMP threads. A running sum is one long chain of
// dependent additions (4 cycles each); SIMD_SCAN 1 (with AVX2) instead scans 8 elements at a time
// in a register (three shift-and-add steps, independent of the previous block) and adds the carry,
// so the chain is one addition per 8 elements. The carry is a float, as is every partial sum.
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune SIMD_SCAN: 1, 0
#ifndef SIMD_SCAN
#define SIMD_SCAN 1
#endif

namespace {

void ScanRow(const float* xr, float* yr, int64_t cols) {
  float carry = 0.0f;
  int64_t c = 0;
#if SIMD_SCAN && defined(__AVX2__)
  const __m256 zero = _mm256_setzero_ps();
  // Lane i takes lane i - s (lanes below s take anything: the blend zeroes them).
  const __m256i shift1 = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6);
  const __m256i shift2 = _mm256_setr_epi32(0, 0, 0, 1, 2, 3, 4, 5);
  const __m256i shift4 = _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 2, 3);
  const __m256i last = _mm256_set1_epi32(7);
  __m256 carry8 = zero;
  for (; c + 8 <= cols; c += 8) {
    __m256 v = _mm256_loadu_ps(xr + c);
    v = _mm256_add_ps(v, _mm256_blend_ps(_mm256_permutevar8x32_ps(v, shift1), zero, 0x01));
    v = _mm256_add_ps(v, _mm256_blend_ps(_mm256_permutevar8x32_ps(v, shift2), zero, 0x03));
    v = _mm256_add_ps(v, _mm256_blend_ps(_mm256_permutevar8x32_ps(v, shift4), zero, 0x0f));
    _mm256_storeu_ps(yr + c, _mm256_add_ps(v, carry8));
    carry8 = _mm256_add_ps(carry8, _mm256_permutevar8x32_ps(v, last));  // + the block's total
  }
  carry = _mm_cvtss_f32(_mm256_castps256_ps128(carry8));
#endif
  for (; c < cols; ++c) {
    carry += xr[c];
    yr[c] = carry;
  }
}

}  // namespace

extern "C" void cumsum(const float* x, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) ScanRow(x + r * cols, y + r * cols, cols);
}
