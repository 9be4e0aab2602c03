#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void gemm_logsumexp_reference(const float* x, const float* w, const float* b, double* y,
                                         int64_t m, int64_t n, int64_t k) {
  std::vector<double> z(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(x[i * k + p]) * w[j * k + p];
      z[j] = sum + b[j];
    }
    double mx = z[0];
    for (int64_t j = 1; j < n; ++j) mx = std::fmax(mx, z[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(z[j] - mx);
    y[i] = mx + std::log(sum);
  }
}
