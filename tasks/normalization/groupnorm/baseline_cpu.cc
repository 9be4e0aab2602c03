#include <cmath>
#include <cstdint>

extern "C" void groupnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw, int64_t g, int64_t cpg) {
  const float eps = 1e-5f;
  const int64_t length = cpg * hw;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < g; ++j) {
      const float* xg = x + (i * c + j * cpg) * hw;
      float* yg = y + (i * c + j * cpg) * hw;
      float mean = 0.0f;
      for (int64_t e = 0; e < length; ++e) mean += xg[e];
      mean /= static_cast<float>(length);
      float var = 0.0f;
      for (int64_t e = 0; e < length; ++e) var += (xg[e] - mean) * (xg[e] - mean);
      var /= static_cast<float>(length);
      const float inv = 1.0f / std::sqrt(var + eps);
      for (int64_t q = 0; q < cpg; ++q) {
        const int64_t ch = j * cpg + q;
        for (int64_t k = 0; k < hw; ++k) {
          yg[q * hw + k] = (xg[q * hw + k] - mean) * inv * weight[ch] + bias[ch];
        }
      }
    }
  }
}
