// Honest slow leaky_relu: single-threaded loop.
#include <cstdint>

extern "C" void leaky_relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] > 0.0f)
      y[i] = x[i];
    else
      y[i] = 0.01f * x[i];
  }
}
