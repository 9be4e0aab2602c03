// Honest slow sigmoid: single-threaded loop, computed in double and rounded once.
#include <cmath>
#include <cstdint>

extern "C" void sigmoid(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(1.0 / (1.0 + std::exp(-v)));
  }
}
