// Tuner seed for attention_head, fused: queries are taken ROWS at a time by OpenMP threads. For
// one block of query rows, each key row is read once for all of them (ROWS dot products over d),
// giving the block's scores in a per-thread [ROWS, t] buffer; each row's softmax weights are
// then formed in place (max, exp(a - max), sum), and each value row is read once to add
// p_ij * v[j, :] to the block's output rows, scaled by 1 / sum at the end. The scores never leave
// the thread's cache-sized buffer.
// std::exp is a scalar library call the compiler cannot vectorize without -ffast-math; with
// POLY_EXP a polynomial exp (range reduction by ln 2, degree-7 Taylor series, relative error about
// 1e-7, for arguments <= 0 as a - max always is) is plain arithmetic that `omp simd` turns into
// full-width vector code.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

// @tune ROWS: 8, 2, 32
#ifndef ROWS
#define ROWS 8
#endif

// @tune POLY_EXP: 1, 0
#ifndef POLY_EXP
#define POLY_EXP 1
#endif

namespace {

// exp(v) for v <= 0; below -87 it returns about 1e-38 instead of a smaller number, an absolute
// error no softmax weight can see.
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

}  // namespace

extern "C" void attention_head(const float* q, const float* k, const float* v, float* o, int64_t s,
                               int64_t t, int64_t d) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const int64_t blocks = (s + ROWS - 1) / ROWS;
#pragma omp parallel
  {
    std::vector<float> scores(static_cast<size_t>(ROWS) * t);
    float inv_sum[ROWS];
#pragma omp for schedule(dynamic)
    for (int64_t block = 0; block < blocks; ++block) {
      const int64_t i0 = block * ROWS;
      const int64_t rows = i0 + ROWS < s ? ROWS : s - i0;
      for (int64_t j = 0; j < t; ++j) {
        const float* kj = k + j * d;
        for (int64_t r = 0; r < rows; ++r) {
          const float* qi = q + (i0 + r) * d;
          float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
          for (int64_t c = 0; c < d; ++c) dot += qi[c] * kj[c];
          scores[r * t + j] = dot * scale;
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        float* a = scores.data() + r * t;
        float mx = a[0];
#pragma omp simd reduction(max : mx)
        for (int64_t j = 0; j < t; ++j) mx = a[j] > mx ? a[j] : mx;
        float sum = 0.0f;
#if POLY_EXP
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < t; ++j) {
          a[j] = PolyExp(a[j] - mx);
          sum += a[j];
        }
#else
        for (int64_t j = 0; j < t; ++j) {
          a[j] = std::exp(a[j] - mx);
          sum += a[j];
        }
#endif
        inv_sum[r] = 1.0f / sum;
      }
      float* ob = o + i0 * d;
      for (int64_t e = 0; e < rows * d; ++e) ob[e] = 0.0f;
      for (int64_t j = 0; j < t; ++j) {
        const float* vj = v + j * d;
        for (int64_t r = 0; r < rows; ++r) {
          const float pj = scores[r * t + j];
          float* oi = ob + r * d;
#pragma omp simd
          for (int64_t c = 0; c < d; ++c) oi[c] += pj * vj[c];
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        float* oi = ob + r * d;
#pragma omp simd
        for (int64_t c = 0; c < d; ++c) oi[c] *= inv_sum[r];
      }
    }
  }
}
