#include <cstdint>

extern "C" void row_max(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float mx = x[r * cols];
    for (int64_t c = 1; c < cols; ++c) mx = x[r * cols + c] > mx ? x[r * cols + c] : mx;
    y[r] = mx;
  }
}
