#include <cmath>
#include <cstdint>

extern "C" void gelu_backward_reference(const float* x, const float* dy, double* dx, int64_t n) {
  const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * 3.14159265358979323846);
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    const double cdf = 0.5 * (1.0 + std::erf(v * inv_sqrt2));
    const double pdf = std::exp(-0.5 * v * v) * inv_sqrt_2pi;
    dx[i] = static_cast<double>(dy[i]) * (cdf + v * pdf);
  }
}
