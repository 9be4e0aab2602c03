#include <cmath>
#include <cstdint>

extern "C" void row_mean_reference(const float* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    y[r] = sum / static_cast<double>(cols);
  }
}
