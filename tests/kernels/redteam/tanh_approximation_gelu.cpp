// expect: wrong_output
// tries: GELU's tanh approximation (approximate='tanh'), cheaper than erf and off by up to 5e-4:
// the task asks for the erf form, and its noise allowance must not blur the two.
// cause: relative error
#include <cmath>
#include <cstdint>

extern "C" void gelu(const float* x, float* y, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}
