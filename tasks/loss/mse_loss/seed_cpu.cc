// Tuner seed for mse_loss: the vector is cut into blocks of BLOCK elements spread over OpenMP
// threads; each block's squared differences are summed with SIMD partial sums (a float sum in a
// fixed order cannot be vectorized, these lanes can) and the block sums are added in double.
// Accumulating the blocks in double as well buys accuracy at half the vector width.
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune ACC_TYPE: float, double
#ifndef ACC_TYPE
#define ACC_TYPE float
#endif

// @tune BLOCK: 1024, 8192
#ifndef BLOCK
#define BLOCK 8192
#endif

extern "C" void mse_loss(const float* pred, const float* target, float* loss, int64_t n) {
  double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) if (PARALLEL && n > BLOCK)
  for (int64_t b0 = 0; b0 < n; b0 += BLOCK) {
    const int64_t b1 = b0 + BLOCK < n ? b0 + BLOCK : n;
    ACC_TYPE part = 0;
#pragma omp simd reduction(+ : part)
    for (int64_t i = b0; i < b1; ++i) {
      const float d = pred[i] - target[i];
      part += static_cast<ACC_TYPE>(d * d);
    }
    total += static_cast<double>(part);
  }
  loss[0] = static_cast<float>(total / static_cast<double>(n));
}
