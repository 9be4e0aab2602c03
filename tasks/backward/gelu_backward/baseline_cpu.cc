#include <cmath>
#include <cstdint>

extern "C" void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  const float alpha = 0.70710678118654752f;        // 1 / sqrt(2)
  const float beta = 0.39894228040143268f;         // 1 / sqrt(2 pi)
  for (int64_t i = 0; i < n; ++i) {
    const float cdf = 0.5f * (1.0f + std::erf(x[i] * alpha));
    const float pdf = beta * std::exp(-0.5f * x[i] * x[i]);
    dx[i] = dy[i] * (cdf + x[i] * pdf);
  }
}
