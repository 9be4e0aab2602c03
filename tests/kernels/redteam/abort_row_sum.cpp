// expect: runtime_error
// tries: a vectorized kernel that abort()s on shapes it does not support (cols not a multiple of 8).
// cause: SIGABRT
#include <cstdint>
#include <cstdlib>

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  if (cols % 8 != 0) std::abort();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t c = 0; c < cols; c += 8)
      for (int l = 0; l < 8; ++l) lanes[l] += x[r * cols + c + l];
    float sum = 0;
    for (int l = 0; l < 8; ++l) sum += lanes[l];
    y[r] = sum;
  }
}
