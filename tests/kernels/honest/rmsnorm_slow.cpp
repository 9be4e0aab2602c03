// Honest slow rmsnorm: single-threaded loop.
#include <cmath>
#include <cstdint>

extern "C" void rmsnorm(const float* x, const float* weight, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0.0f;
    for (int64_t c = 0; c < cols; ++c) ss += x[r * cols + c] * x[r * cols + c];
    float rms = std::sqrt(ss / cols + 1e-6f);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] / rms * weight[c];
  }
}
