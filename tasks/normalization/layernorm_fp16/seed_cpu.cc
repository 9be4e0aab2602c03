// Tuner seed for layernorm_fp16: rows spread over OpenMP threads; per row the fp16 values are
// widened once into a per-thread fp32 buffer, then a two-pass mean and variance with SIMD partial
// sums (a float sum in a fixed order cannot be vectorized, these lanes can), then the
// normalization, rounded once to fp16. Accumulating in double buys accuracy at half the vector
// width.
#include <cmath>
#include <cstdint>
#include <vector>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune ACC_TYPE: float, double
#ifndef ACC_TYPE
#define ACC_TYPE float
#endif

extern "C" void layernorm_fp16(const _Float16* x, const _Float16* weight, const _Float16* bias,
                               _Float16* y, int64_t rows, int64_t cols) {
#pragma omp parallel if (PARALLEL && rows > 1)
  {
    // Per thread: the row in fp32, and weight and bias widened once.
    std::vector<float> buffer(static_cast<size_t>(3 * cols));
    float* xf = buffer.data();
    float* wf = xf + cols;
    float* bf = wf + cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      wf[c] = static_cast<float>(weight[c]);
      bf[c] = static_cast<float>(bias[c]);
    }
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const _Float16* xr = x + r * cols;
      _Float16* yr = y + r * cols;
      ACC_TYPE sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < cols; ++c) {
        xf[c] = static_cast<float>(xr[c]);
        sum += xf[c];
      }
      const float mean = static_cast<float>(sum / static_cast<ACC_TYPE>(cols));
      ACC_TYPE squares = 0;
#pragma omp simd reduction(+ : squares)
      for (int64_t c = 0; c < cols; ++c) {
        const float d = xf[c] - mean;
        squares += static_cast<ACC_TYPE>(d) * d;
      }
      const float variance = static_cast<float>(squares / static_cast<ACC_TYPE>(cols));
      const float inv = 1.0f / std::sqrt(variance + 1e-5f);
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<_Float16>((xf[c] - mean) * inv * wf[c] + bf[c]);
    }
  }
}
