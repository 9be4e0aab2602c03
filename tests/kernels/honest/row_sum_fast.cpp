// Honest fast row_sum: one row per OpenMP iteration; each row is summed in blocks of 1024
// (SIMD partial sums inside a block), and the block sums are added, keeping float error small.
#include <cstdint>
#include <omp.h>

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t block = 1024;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float total = 0.0f;
    for (int64_t c0 = 0; c0 < cols; c0 += block) {
      const int64_t c1 = c0 + block < cols ? c0 + block : cols;
      float part = 0.0f;
#pragma omp simd reduction(+ : part)
      for (int64_t c = c0; c < c1; ++c) part += xr[c];
      total += part;
    }
    y[r] = total;
  }
}
