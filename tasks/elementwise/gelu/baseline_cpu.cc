#include <cmath>
#include <cstdint>

extern "C" void gelu(const float* x, float* y, int64_t n) {
  const float inv_sqrt2 = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * inv_sqrt2));
}
