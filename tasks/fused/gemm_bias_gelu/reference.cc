#include <cmath>
#include <cstdint>

extern "C" void gemm_bias_gelu_reference(const float* x, const float* w, const float* b, double* y,
                                         int64_t m, int64_t n, int64_t k) {
  const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(x[i * k + p]) * w[j * k + p];
      const double z = sum + b[j];
      // 0.5 z (1 + erf(z / sqrt 2)) without the cancellation of 1 + erf far below zero.
      y[i * n + j] = 0.5 * z * std::erfc(-z * inv_sqrt2);
    }
}
