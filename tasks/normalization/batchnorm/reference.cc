#include <cmath>
#include <cstdint>

extern "C" void batchnorm_reference(const float* x, const float* weight, const float* bias, double* y,
                                    int64_t n, int64_t c, int64_t hw) {
  const double eps = 1e-5;
  const double count = static_cast<double>(n) * static_cast<double>(hw);
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) mean += xs[k];
    }
    mean /= count;
    double var = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) {
        const double d = xs[k] - mean;
        var += d * d;
      }
    }
    var /= count;
    const double inv = 1.0 / std::sqrt(var + eps);
    const double w = weight[ch];
    const double b = bias[ch];
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      double* ys = y + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) ys[k] = (xs[k] - mean) * inv * w + b;
    }
  }
}
