// Honest slow row_max: single-threaded loop, the running max starting at the row's first value.
#include <cstdint>

extern "C" void row_max(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float mx = x[r * cols];
    for (int64_t c = 1; c < cols; ++c)
      if (x[r * cols + c] > mx) mx = x[r * cols + c];
    y[r] = mx;
  }
}
