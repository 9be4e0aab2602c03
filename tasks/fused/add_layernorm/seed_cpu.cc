// Tuner seed for add_layernorm: rows spread over OpenMP threads; per row one SIMD pass that stores
// s = x + residual in the row of y (a scratch row that stays in cache) while summing it, a
// second pass for the sum of squared deviations, and a last one that normalizes y in place. SIMD
// partial sums (a float sum in a fixed order cannot be vectorized, these lanes can); accumulating
// in double buys accuracy at half the vector width. SIMDLEN asks the compiler for a vector length
// (8 floats: 256-bit registers, 16: 512-bit where the CPU has AVX-512); CHUNK is how many rows an
// OpenMP thread takes at a time.
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

// @tune SIMDLEN: 4, 8, 16
#ifndef SIMDLEN
#define SIMDLEN 8
#endif

// @tune CHUNK: 1, 16, 256
#ifndef CHUNK
#define CHUNK 16
#endif

extern "C" void add_layernorm(const float* x, const float* residual, const float* weight,
                              const float* bias, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static, CHUNK) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* rr = residual + r * cols;
    float* yr = y + r * cols;
    ACC_TYPE sum = 0;
#pragma omp simd simdlen(SIMDLEN) reduction(+ : sum)
    for (int64_t c = 0; c < cols; ++c) {
      const float v = xr[c] + rr[c];
      yr[c] = v;
      sum += v;
    }
    const float mean = static_cast<float>(sum / static_cast<ACC_TYPE>(cols));
    ACC_TYPE squares = 0;
#pragma omp simd simdlen(SIMDLEN) reduction(+ : squares)
    for (int64_t c = 0; c < cols; ++c) {
      const float d = yr[c] - mean;
      squares += static_cast<ACC_TYPE>(d) * d;
    }
    const float variance = static_cast<float>(squares / static_cast<ACC_TYPE>(cols));
    const float inv = 1.0f / std::sqrt(variance + 1e-5f);
#pragma omp simd simdlen(SIMDLEN)
    for (int64_t c = 0; c < cols; ++c) yr[c] = (yr[c] - mean) * inv * weight[c] + bias[c];
  }
}
