#include <cmath>
#include <cstdint>

extern "C" void batchnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw) {
  const float eps = 1e-5f;
  const float count = static_cast<float>(n * hw);
  for (int64_t ch = 0; ch < c; ++ch) {
    float mean = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) mean += xs[k];
    }
    mean /= count;
    float var = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) var += (xs[k] - mean) * (xs[k] - mean);
    }
    var /= count;
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      float* ys = y + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) ys[k] = (xs[k] - mean) * inv * weight[ch] + bias[ch];
    }
  }
}
