// Honest slow layernorm: single-threaded two-pass loop.
#include <cmath>
#include <cstdint>

extern "C" void layernorm(const float* x, const float* gamma, const float* beta, float* y,
                          int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float mean = 0.0f;
    for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= cols;
    float var = 0.0f;
    for (int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= cols;
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = (x[r * cols + c] - mean) / std::sqrt(var + 1e-5f) * gamma[c] + beta[c];
  }
}
