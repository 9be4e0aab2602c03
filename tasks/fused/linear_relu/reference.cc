#include <cstdint>

extern "C" void linear_relu_reference(const float* x, const float* w, const float* b, double* y,
                                      int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(x[i * k + p]) * w[j * k + p];
      const double z = sum + b[j];
      y[i * n + j] = z > 0.0 ? z : 0.0;
    }
}
