// Honest slow gelu: single-threaded loop, exact erf form.
#include <cmath>
#include <cstdint>

extern "C" void gelu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] / std::sqrt(2.0f)));
}
