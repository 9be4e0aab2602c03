// CPU baseline: the unfused sequence PyTorch eager runs for gelu(linear(x, w, b)): addmm (b
// broadcast into every row of a temporary, then OpenBLAS sgemm with beta = 1 adds x @ w^T), then
// a separate single-threaded erf GELU pass from the temporary into y.
#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void gemm_bias_gelu(const float* x, const float* w, const float* b, float* y, int64_t m,
                               int64_t n, int64_t k) {
  std::vector<float> z(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) z[i * n + j] = b[j];
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, x, static_cast<int>(k), w, static_cast<int>(k), 1.0f, z.data(),
              static_cast<int>(n));
  const float inv_sqrt2 = 0.70710678118654752f;
  for (int64_t e = 0; e < m * n; ++e) y[e] = 0.5f * z[e] * (1.0f + std::erf(z[e] * inv_sqrt2));
}
