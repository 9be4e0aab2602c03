#include <cmath>
#include <cstdint>

extern "C" void gelu_reference(const float* x, double* y, int64_t n) {
  const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i];
    y[i] = 0.5 * v * (1.0 + std::erf(v * inv_sqrt2));
  }
}
