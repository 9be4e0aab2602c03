// Honest slow transpose: single-threaded double loop (strided writes).
#include <cstdint>

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * cols + c];
}
