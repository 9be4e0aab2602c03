// Tuner seed for rmsnorm_residual: rows spread over OpenMP threads; per row one SIMD pass that
// writes h = x + residual and sums its squares (a float sum in a fixed order cannot be
// vectorized, these partial sums can), then the scaling reads h back while the row is still in
// cache. Accumulating in double buys accuracy at half the vector width.
#include <cmath>
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune ACC_TYPE: float, double
#ifndef ACC_TYPE
#define ACC_TYPE float
#endif

extern "C" void rmsnorm_residual(const float* x, const float* residual, const float* weight, float* h,
                                 float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* rr = residual + r * cols;
    float* hr = h + r * cols;
    float* yr = y + r * cols;
    ACC_TYPE squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t c = 0; c < cols; ++c) {
      const float v = xr[c] + rr[c];
      hr[c] = v;
      squares += static_cast<ACC_TYPE>(v) * v;
    }
    const float mean_square = static_cast<float>(squares / static_cast<ACC_TYPE>(cols));
    const float inv = 1.0f / std::sqrt(mean_square + 1e-6f);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] = hr[c] * inv * weight[c];
  }
}
