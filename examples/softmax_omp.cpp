// softmax_omp.cpp: an honest OpenMP softmax for the ksmith "softmax" task.
//
//   y[r, c] = exp(x[r, c] - max_j x[r, j]) / sum_j exp(x[r, j] - max_j x[r, j])
//
// x and y are [rows, cols], contiguous row-major fp32. Rows are independent, so they are
// split across OpenMP threads; within a row, four passes (max, exp, sum, scale) use SIMD
// reductions. Subtracting the row max keeps exp() from overflowing for large inputs.
#include <cmath>
#include <cstdint>
#include <omp.h>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;

    // Pass 1: row max.
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int64_t c = 0; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;

    // Pass 2: exponentials, stored in y (the row is still in cache for the sum).
    for (int64_t c = 0; c < cols; ++c) yr[c] = std::exp(xr[c] - mx);

    // Pass 3: their sum. The SIMD reduction keeps one partial sum per vector lane, which is
    // both faster and more accurate than one long serial float sum.
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < cols; ++c) sum += yr[c];

    // Pass 4: normalize.
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}
