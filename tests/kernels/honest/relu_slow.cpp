// Honest slow relu: single-threaded loop.
#include <cstdint>

extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] > 0.0f)
      y[i] = x[i];
    else
      y[i] = 0.0f;
  }
}
