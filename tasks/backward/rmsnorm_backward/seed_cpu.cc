// Tuner seed for rmsnorm_backward: the rows are cut into CHUNKS contiguous chunks, handed to OpenMP
// threads; per row the sum of squares and the row sum of g * x (g = dy * weight) with SIMD partial
// sums, then dx, and the row's dy * x * rstd added into the chunk's own partial dweight. A second
// parallel loop over columns adds the chunks' partials in chunk order, so the result is the same
// whatever the thread count (deterministic, no atomics). Accumulating the row sums in double buys
// accuracy at half the vector width.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

// @tune CHUNKS: 64, 256
#ifndef CHUNKS
#define CHUNKS 64
#endif

// @tune ACC_TYPE: float, double
#ifndef ACC_TYPE
#define ACC_TYPE float
#endif

namespace {

constexpr float kEps = 1e-6f;

// dx of one row, and its terms added into pw (dweight).
void Row(const float* xr, const float* dyr, const float* weight, float* dxr, float* pw, int64_t cols) {
  ACC_TYPE squares = 0;
  ACC_TYPE sum_gx = 0;
#pragma omp simd reduction(+ : squares, sum_gx)
  for (int64_t c = 0; c < cols; ++c) {
    squares += static_cast<ACC_TYPE>(xr[c]) * xr[c];
    sum_gx += static_cast<ACC_TYPE>(dyr[c] * weight[c]) * xr[c];
  }
  const float rstd = 1.0f / std::sqrt(static_cast<float>(squares / static_cast<ACC_TYPE>(cols)) + kEps);
  const float mean_gx = static_cast<float>(sum_gx / static_cast<ACC_TYPE>(cols));
  if (cols == 1) {
    // The general formula cancels to its eps term here: the closed form is the same value.
    dxr[0] = kEps * rstd * rstd * rstd * (dyr[0] * weight[0]);
  } else {
    const float rstd3 = rstd * rstd * rstd;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) dxr[c] = rstd * (dyr[c] * weight[c]) - rstd3 * xr[c] * mean_gx;
  }
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) pw[c] += dyr[c] * (xr[c] * rstd);
}

}  // namespace

extern "C" void rmsnorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                 float* dweight, int64_t rows, int64_t cols) {
  const int64_t chunks = std::min<int64_t>(CHUNKS, rows);
  std::vector<float> partial(static_cast<size_t>(chunks * cols));  // chunk k's dweight at k * cols
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t k = 0; k < chunks; ++k) {
    float* pw = partial.data() + k * cols;
    const int64_t r0 = rows * k / chunks;
    const int64_t r1 = rows * (k + 1) / chunks;
    for (int64_t r = r0; r < r1; ++r) Row(x + r * cols, dy + r * cols, weight, dx + r * cols, pw, cols);
  }
  constexpr int64_t kColumnBlock = 1024;
  const int64_t blocks = (cols + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = b * kColumnBlock;
    const int64_t c1 = std::min(cols, c0 + kColumnBlock);
#pragma omp simd
    for (int64_t c = c0; c < c1; ++c) dweight[c] = 0.0f;
    for (int64_t k = 0; k < chunks; ++k) {
      const float* pw = partial.data() + k * cols;
#pragma omp simd
      for (int64_t c = c0; c < c1; ++c) dweight[c] += pw[c];
    }
  }
}
