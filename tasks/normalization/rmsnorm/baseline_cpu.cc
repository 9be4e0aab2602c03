#include <cmath>
#include <cstdint>

extern "C" void rmsnorm(const float* x, const float* weight, float* y, int64_t rows, int64_t cols) {
  const float eps = 1e-6f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float ss = 0.0f;
    for (int64_t c = 0; c < cols; ++c) ss += xr[c] * xr[c];
    float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * inv * weight[c];
  }
}
