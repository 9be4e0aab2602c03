#include <cmath>
#include <cstdint>

extern "C" void leaky_relu_reference(const float* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i];
    y[i] = v > 0.0 ? v : 0.01 * v;
  }
}
