// Honest fast log_softmax: one row per OpenMP iteration, SIMD max, max subtraction for stability,
// then y = (x - max) - log(sum of exp(x - max)) with a SIMD subtraction.
#include <cmath>
#include <cstdint>
#include <omp.h>

extern "C" void log_softmax(const float* x, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int64_t c = 0; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
    // exp(x - max) goes through y so that the sum below is a SIMD reduction (separate partial
    // sums per lane: faster and more accurate); y is overwritten with the result afterwards.
    for (int64_t c = 0; c < cols; ++c) yr[c] = std::exp(xr[c] - mx);
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < cols; ++c) sum += yr[c];
    const float log_sum = std::log(sum);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - mx) - log_sum;
  }
}
