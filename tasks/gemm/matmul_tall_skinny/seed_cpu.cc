// Tuner seed for matmul_tall_skinny: rows of a and c spread over OpenMP threads in chunks of
// CHUNK rows; b (at most 64 x 64) stays in L1. Each row of c is built as sum_p a[i, p] * b[p, :]
// (a SIMD multiply-add of a row of b per element of a), ROWS rows at a time so that every row of
// b loaded serves ROWS rows of c. For narrow outputs (n < 8) the SIMD width would be wasted on
// n, so DOT_SMALL_N 1 computes each c[i, j] as a SIMD dot product over k against a transposed
// copy of b instead.
#include <cstddef>
#include <cstdint>
#include <vector>

// @tune ROWS: 4, 1
#ifndef ROWS
#define ROWS 4
#endif

// @tune CHUNK: 1024, 64
#ifndef CHUNK
#define CHUNK 1024
#endif

// @tune DOT_SMALL_N: 1, 0
#ifndef DOT_SMALL_N
#define DOT_SMALL_N 1
#endif

namespace {

// c[i0 .. i1) = a[i0 .. i1) @ b, row-of-b updates, ROWS rows at a time.
void RowsAxpy(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t i0,
              int64_t i1) {
  int64_t i = i0;
  if (ROWS == 4) {
    for (; i + 4 <= i1; i += 4) {
      float* c0 = c + i * n;
      float* c1 = c0 + n;
      float* c2 = c1 + n;
      float* c3 = c2 + n;
      const float* a0 = a + i * k;
#pragma omp simd
      for (int64_t j = 0; j < 4 * n; ++j) c0[j] = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float* bp = b + p * n;
        const float v0 = a0[p];
        const float v1 = a0[k + p];
        const float v2 = a0[2 * k + p];
        const float v3 = a0[3 * k + p];
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
          const float bj = bp[j];
          c0[j] += v0 * bj;
          c1[j] += v1 * bj;
          c2[j] += v2 * bj;
          c3[j] += v3 * bj;
        }
      }
    }
  }
  for (; i < i1; ++i) {
    float* ci = c + i * n;
    const float* ai = a + i * k;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float* bp = b + p * n;
      const float v = ai[p];
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) ci[j] += v * bp[j];
    }
  }
}

// c[i0 .. i1) = a[i0 .. i1) @ b as dot products with bt = b^T ([n, k]).
void RowsDot(const float* a, const float* bt, float* c, int64_t n, int64_t k, int64_t i0,
             int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    const float* ai = a + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const float* bj = bt + j * k;
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t p = 0; p < k; ++p) sum += ai[p] * bj[p];
      c[i * n + j] = sum;
    }
  }
}

}  // namespace

extern "C" void matmul_tall_skinny(const float* a, const float* b, float* c, int64_t m, int64_t n,
                                   int64_t k) {
  const int64_t chunks = (m + CHUNK - 1) / CHUNK;
  const bool big = m * (n + k) >= 65536;  // below this, starting threads costs more than it saves
  if (DOT_SMALL_N && n < 8) {
    std::vector<float> bt(static_cast<size_t>(n * k));
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) bt[j * k + p] = b[p * n + j];
#pragma omp parallel for schedule(static) if (big)
    for (int64_t t = 0; t < chunks; ++t) {
      const int64_t i0 = t * CHUNK;
      RowsDot(a, bt.data(), c, n, k, i0, i0 + CHUNK < m ? i0 + CHUNK : m);
    }
    return;
  }
#pragma omp parallel for schedule(static) if (big)
  for (int64_t t = 0; t < chunks; ++t) {
    const int64_t i0 = t * CHUNK;
    RowsAxpy(a, b, c, n, k, i0, i0 + CHUNK < m ? i0 + CHUNK : m);
  }
}
