// PyTorch eager runs `h = x + residual; y = F.rms_norm(h, ...)` unfused, and oneDNN (2.6) has no
// RMS norm: a vectorized multi-threaded add writes h, then one vectorized pass per row reads it
// back (sum of squares with lane-wise partial sums, then scale), rows shared out over all cores.
#include <cmath>
#include <cstdint>

extern "C" void rmsnorm_residual(const float* x, const float* residual, const float* weight, float* h,
                                 float* y, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
#pragma omp parallel for simd schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) h[i] = x[i] + residual[i];

#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* hr = h + r * cols;
    float* yr = y + r * cols;
    float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
    for (int64_t c = 0; c < cols; ++c) ss += hr[c] * hr[c];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + 1e-6f);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] = hr[c] * inv * weight[c];
  }
}
