// Tuner seed for softmax_backward: rows spread over OpenMP threads; per row a SIMD dot product
// of dy and y (lane partial sums, which a float sum in a fixed order would forbid), then
// dx = y * (dy - dot). Accumulating the dot product in double buys accuracy at half the vector
// width.
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune ACC_TYPE: float, double
#ifndef ACC_TYPE
#define ACC_TYPE float
#endif

extern "C" void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows,
                                 int64_t cols) {
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    ACC_TYPE dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t c = 0; c < cols; ++c) dot += static_cast<ACC_TYPE>(dyr[c]) * yr[c];
    const float s = static_cast<float>(dot);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) dxr[c] = yr[c] * (dyr[c] - s);
  }
}
