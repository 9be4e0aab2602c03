// Tuner seed for layernorm_backward: the rows are cut into CHUNKS contiguous chunks, handed to
// OpenMP threads; per row a two-pass mean and variance and the row sums of g = dy * weight and
// g * xhat with SIMD partial sums, then dx, and the row's dy * xhat and dy added into the chunk's
// own partial dweight and dbias. A second parallel loop over columns adds the chunks' partials in
// chunk order, so the result is the same whatever the thread count (deterministic, no atomics).
// Accumulating the row sums in double buys accuracy at half the vector width.
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

constexpr float kEps = 1e-5f;

// dx of row r, and its terms added into pw (dweight) and pb (dbias).
void Row(const float* xr, const float* dyr, const float* weight, float* dxr, float* pw, float* pb,
         int64_t cols) {
  if (cols == 2) {
    // Closed forms: the general dx formula cancels to its eps term, and xhat = +-half_delta * rstd
    // exactly (through x - mean it would carry mean's rounding error, large next to a small
    // half_delta).
    const float half_delta = (xr[0] - xr[1]) * 0.5f;
    const float rstd = 1.0f / std::sqrt(half_delta * half_delta + kEps);
    const float xhat0 = half_delta * rstd;
    dxr[0] = kEps * rstd * rstd * rstd * (dyr[0] * weight[0] - dyr[1] * weight[1]) * 0.5f;
    dxr[1] = -dxr[0];
    pw[0] += dyr[0] * xhat0;
    pw[1] += dyr[1] * -xhat0;
    pb[0] += dyr[0];
    pb[1] += dyr[1];
    return;
  }
  ACC_TYPE sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < cols; ++c) sum += xr[c];
  const float mean = static_cast<float>(sum / static_cast<ACC_TYPE>(cols));
  ACC_TYPE squares = 0;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < cols; ++c) {
    const float d = xr[c] - mean;
    squares += static_cast<ACC_TYPE>(d) * d;
  }
  const float var = static_cast<float>(squares / static_cast<ACC_TYPE>(cols));
  const float rstd = 1.0f / std::sqrt(var + kEps);
  if (cols == 1) {
    dxr[0] = 0.0f;  // exactly: g - mean(g) with a contracted product would leave a rounding error
  } else {
    ACC_TYPE sum_g = 0;
    ACC_TYPE sum_gx = 0;
#pragma omp simd reduction(+ : sum_g, sum_gx)
    for (int64_t c = 0; c < cols; ++c) {
      const float g = dyr[c] * weight[c];
      sum_g += g;
      sum_gx += static_cast<ACC_TYPE>(g) * ((xr[c] - mean) * rstd);
    }
    const float mean_g = static_cast<float>(sum_g / static_cast<ACC_TYPE>(cols));
    const float mean_gx = static_cast<float>(sum_gx / static_cast<ACC_TYPE>(cols));
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      const float xhat = (xr[c] - mean) * rstd;
      dxr[c] = rstd * (dyr[c] * weight[c] - mean_g - xhat * mean_gx);
    }
  }
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) {
    pw[c] += dyr[c] * ((xr[c] - mean) * rstd);
    pb[c] += dyr[c];
  }
}

}  // namespace

extern "C" void layernorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                   float* dweight, float* dbias, int64_t rows, int64_t cols) {
  const int64_t chunks = std::min<int64_t>(CHUNKS, rows);
  // partial[k] holds chunk k's dweight (cols floats) then its dbias (cols floats).
  std::vector<float> partial(static_cast<size_t>(chunks * 2 * cols));
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t k = 0; k < chunks; ++k) {
    float* pw = partial.data() + k * 2 * cols;
    float* pb = pw + cols;
    const int64_t r0 = rows * k / chunks;
    const int64_t r1 = rows * (k + 1) / chunks;
    for (int64_t r = r0; r < r1; ++r) {
      Row(x + r * cols, dy + r * cols, weight, dx + r * cols, pw, pb, cols);
    }
  }
  constexpr int64_t kColumnBlock = 1024;
  const int64_t blocks = (cols + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = b * kColumnBlock;
    const int64_t c1 = std::min(cols, c0 + kColumnBlock);
#pragma omp simd
    for (int64_t c = c0; c < c1; ++c) {
      dweight[c] = 0.0f;
      dbias[c] = 0.0f;
    }
    for (int64_t k = 0; k < chunks; ++k) {
      const float* pw = partial.data() + k * 2 * cols;
      const float* pb = pw + cols;
#pragma omp simd
      for (int64_t c = c0; c < c1; ++c) {
        dweight[c] += pw[c];
        dbias[c] += pb[c];
      }
    }
  }
}
