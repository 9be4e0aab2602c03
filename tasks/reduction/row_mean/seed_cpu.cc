// Tuner seed for row_mean: rows spread over OpenMP threads; each row summed in blocks with SIMD
// partial sums (a float sum in a fixed order cannot be vectorized, these lanes can), then the
// block sums added and divided by cols. Accumulating in double buys accuracy at half the vector
// width.
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune ACC_TYPE: float, double
#ifndef ACC_TYPE
#define ACC_TYPE float
#endif

// @tune BLOCK: 512, 4096
#ifndef BLOCK
#define BLOCK 4096
#endif

extern "C" void row_mean(const float* x, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    ACC_TYPE total = 0;
    for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
      const int64_t c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
      ACC_TYPE part = 0;
#pragma omp simd reduction(+ : part)
      for (int64_t c = c0; c < c1; ++c) part += xr[c];
      total += part;
    }
    y[r] = static_cast<float>(total / static_cast<ACC_TYPE>(cols));
  }
}
