// Tuner seed for rmsnorm: rows spread over OpenMP threads; per row a SIMD sum of squares (a float
// sum in a fixed order cannot be vectorized, these partial sums can), then the scaling.
// Accumulating in double buys accuracy at half the vector width.
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

extern "C" void rmsnorm(const float* x, const float* weight, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    ACC_TYPE squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t c = 0; c < cols; ++c) squares += static_cast<ACC_TYPE>(xr[c]) * xr[c];
    const float mean_square = static_cast<float>(squares / static_cast<ACC_TYPE>(cols));
    const float inv = 1.0f / std::sqrt(mean_square + 1e-6f);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * inv * weight[c];
  }
}
