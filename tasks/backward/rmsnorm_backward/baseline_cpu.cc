// oneDNN has no RMS norm backward, so this is a vectorized OpenMP loop over rows on all cores, as
// PyTorch eager's ATen kernels: each thread sums its rows' dweight into its own buffer, and the
// buffers are added up at the end.
#include <cmath>
#include <cstdint>
#include <memory>

#include <omp.h>

extern "C" void rmsnorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                 float* dweight, int64_t rows, int64_t cols) {
  const float eps = 1e-6f;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  const bool parallel = rows > 1 && rows * cols > 32768;
  const int64_t max_threads = parallel ? omp_get_max_threads() : 1;
  const std::unique_ptr<float[]> partial(new float[cols * max_threads]);
  int64_t threads = 1;
#pragma omp parallel if (parallel)
  {
    const int64_t thread = omp_get_thread_num();
#pragma omp single
    threads = omp_get_num_threads();
    float* dw = partial.get() + cols * thread;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) dw[c] = 0.0f;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      const float* dyr = dy + r * cols;
      float* dxr = dx + r * cols;
      float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
      for (int64_t c = 0; c < cols; ++c) squares += xr[c] * xr[c];
      const float rstd = 1.0f / std::sqrt(squares * inv_cols + eps);
      if (cols == 1) {
        // The general dx formula cancels to its eps term here; this closed form is the same value.
        dxr[0] = eps * rstd * rstd * rstd * (dyr[0] * weight[0]);
        dw[0] += dyr[0] * (xr[0] * rstd);
        continue;
      }
      float sum_gx = 0.0f;
#pragma omp simd reduction(+ : sum_gx)
      for (int64_t c = 0; c < cols; ++c) sum_gx += dyr[c] * weight[c] * xr[c];
      const float mean_gx = sum_gx * inv_cols;
      const float rstd3 = rstd * rstd * rstd;
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) {
        dxr[c] = rstd * (dyr[c] * weight[c]) - rstd3 * xr[c] * mean_gx;
        dw[c] += dyr[c] * (xr[c] * rstd);
      }
    }
#pragma omp for schedule(static)
    for (int64_t c = 0; c < cols; ++c) {
      float w = 0.0f;
      for (int64_t t = 0; t < threads; ++t) w += partial[cols * t + c];
      dweight[c] = w;
    }
  }
}
