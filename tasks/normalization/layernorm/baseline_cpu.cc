#include <cmath>
#include <cstdint>

extern "C" void layernorm(const float* x, const float* gamma, const float* beta, float* y,
                          int64_t rows, int64_t cols) {
  const float eps = 1e-5f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mean = 0.0f;
    for (int64_t c = 0; c < cols; ++c) mean += xr[c];
    mean /= static_cast<float>(cols);
    float var = 0.0f;
    for (int64_t c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    var /= static_cast<float>(cols);
    float inv = 1.0f / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - mean) * inv * gamma[c] + beta[c];
  }
}
