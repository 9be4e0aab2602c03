#include <cstdint>

extern "C" void leaky_relu(const float* x, float* y, int64_t n) {
  const float negative_slope = 0.01f;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : x[i] * negative_slope;
}
