#include <cmath>
#include <cstdint>

// exp(-t) overflows to infinity below t = -709, where t / (1 + inf) is the exact limit -0.
extern "C" void groupnorm_silu_reference(const float* x, const float* weight, const float* bias,
                                         double* y, int64_t n, int64_t g, int64_t cpg, int64_t hw,
                                         int64_t c) {
  const double eps = 1e-5;
  const int64_t size = cpg * hw;  // one group's elements, contiguous
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t k = 0; k < g; ++k) {
      const float* xg = x + (b * c + k * cpg) * hw;
      double* yg = y + (b * c + k * cpg) * hw;
      double mean = 0.0;
      for (int64_t e = 0; e < size; ++e) mean += xg[e];
      mean /= static_cast<double>(size);
      double var = 0.0;
      for (int64_t e = 0; e < size; ++e) {
        double d = xg[e] - mean;
        var += d * d;
      }
      var /= static_cast<double>(size);
      double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t j = 0; j < cpg; ++j) {
        const int64_t ch = k * cpg + j;
        const double w = weight[ch];
        const double bi = bias[ch];
        for (int64_t s = 0; s < hw; ++s) {
          const int64_t e = j * hw + s;
          const double t = (xg[e] - mean) * inv * w + bi;
          yg[e] = t / (1.0 + std::exp(-t));
        }
      }
    }
  }
}
