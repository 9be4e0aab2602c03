#include <cmath>
#include <cstdint>

extern "C" void matvec_reference(const float* a, const float* x, double* y, int64_t m, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    double sum = 0.0;
    for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(a[i * k + p]) * x[p];
    y[i] = sum;
  }
}
