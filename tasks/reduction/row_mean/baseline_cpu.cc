#include <cstdint>

extern "C" void row_mean(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    y[r] = sum / static_cast<float>(cols);
  }
}
