// Honest fast transpose: 32x32 tiles (both the read and the write tile stay in L1),
// tiles distributed over OpenMP threads.
#include <cstdint>
#include <omp.h>

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t T = 32;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t r0 = 0; r0 < rows; r0 += T)
    for (int64_t c0 = 0; c0 < cols; c0 += T) {
      const int64_t r1 = r0 + T < rows ? r0 + T : rows;
      const int64_t c1 = c0 + T < cols ? c0 + T : cols;
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) y[c * rows + r] = x[r * cols + c];
    }
}
