// Tuner seed for matvec: rows spread over OpenMP threads, each row's dot product with x a SIMD
// reduction (vector partial sums, added at the end). ROWS 4 computes four rows at once, so each
// vector of x loaded serves four rows of a. SPLIT_K 1 parallelizes a few long rows (fewer rows
// than there are likely cores) over k instead: every thread sums a slice of each row.
#include <cstdint>

// @tune ROWS: 4, 1
#ifndef ROWS
#define ROWS 4
#endif

// @tune SPLIT_K: 1, 0
#ifndef SPLIT_K
#define SPLIT_K 1
#endif

namespace {

float Dot(const float* row, const float* x, int64_t k) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t p = 0; p < k; ++p) sum += row[p] * x[p];
  return sum;
}

// y[i .. i + 4) for four consecutive rows starting at a (the row of i).
void Dot4(const float* a, const float* x, float* y, int64_t k) {
  const float* a0 = a;
  const float* a1 = a + k;
  const float* a2 = a + 2 * k;
  const float* a3 = a + 3 * k;
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (int64_t p = 0; p < k; ++p) {
    const float xp = x[p];
    s0 += a0[p] * xp;
    s1 += a1[p] * xp;
    s2 += a2[p] * xp;
    s3 += a3[p] * xp;
  }
  y[0] = s0;
  y[1] = s1;
  y[2] = s2;
  y[3] = s3;
}

}  // namespace

extern "C" void matvec(const float* a, const float* x, float* y, int64_t m, int64_t k) {
  const bool big = m * k >= 65536;  // below this, starting threads costs more than it saves
#if SPLIT_K
  if (m < 16 && k >= 65536) {
    for (int64_t i = 0; i < m; ++i) {
      const float* row = a + i * k;
      float sum = 0.0f;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
      for (int64_t p = 0; p < k; ++p) sum += row[p] * x[p];
      y[i] = sum;
    }
    return;
  }
#endif
  const int64_t groups = (m + ROWS - 1) / ROWS;
#pragma omp parallel for schedule(static) if (big)
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t i = g * ROWS;
    if (ROWS == 4 && i + 4 <= m) {
      Dot4(a + i * k, x, y + i, k);
    } else {
      for (int64_t r = i; r < i + ROWS && r < m; ++r) y[r] = Dot(a + r * k, x, k);
    }
  }
}
