// CPU baseline: the unfused sequence PyTorch eager runs for torch.logsumexp(linear(x, w, b), 1):
// addmm (b broadcast into every row of a temporary, then OpenBLAS sgemm with beta = 1 adds
// x @ w^T), then logsumexp's single-threaded passes: the row maxima, exp(z - max) into a second
// temporary, the row sums, and y = log(sum) + max.
#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void gemm_logsumexp(const float* x, const float* w, const float* b, float* y, int64_t m,
                               int64_t n, int64_t k) {
  std::vector<float> z(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) z[i * n + j] = b[j];
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, x, static_cast<int>(k), w, static_cast<int>(k), 1.0f, z.data(),
              static_cast<int>(n));
  std::vector<float> maxes(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    float mx = z[i * n];
    for (int64_t j = 1; j < n; ++j) mx = z[i * n + j] > mx ? z[i * n + j] : mx;
    maxes[i] = std::isinf(mx) ? 0.0f : mx;  // logsumexp's masked_fill of infinite maxima
  }
  std::vector<float> e(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) e[i * n + j] = std::exp(z[i * n + j] - maxes[i]);
  for (int64_t i = 0; i < m; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) sum += e[i * n + j];
    y[i] = std::log(sum) + maxes[i];
  }
}
