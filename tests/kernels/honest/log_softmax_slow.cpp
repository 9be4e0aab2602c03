// Honest slow log_softmax: single-threaded, max subtraction, three passes per row.
#include <cmath>
#include <cstdint>

extern "C" void log_softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float mx = x[r * cols];
    for (int64_t c = 1; c < cols; ++c)
      if (x[r * cols + c] > mx) mx = x[r * cols + c];
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - mx);
    const float log_sum = std::log(sum);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] - mx - log_sum;
  }
}
