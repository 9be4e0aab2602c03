// Honest fast rmsnorm: one row per OpenMP iteration, SIMD sum of squares.
#include <cmath>
#include <cstdint>
#include <omp.h>

extern "C" void rmsnorm(const float* x, const float* weight, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
    for (int64_t c = 0; c < cols; ++c) ss += xr[c] * xr[c];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + 1e-6f);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * inv * weight[c];
  }
}
