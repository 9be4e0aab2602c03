// CPU baseline: the unfused sequence PyTorch eager runs for torch.sigmoid(x @ w.T).sum(dim=1):
// OpenBLAS sgemm writes z = x @ w^T into a temporary, a single-threaded sigmoid pass rewrites it,
// and a single-threaded pass sums each row into y.
#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void gemm_sigmoid_rowsum(const float* x, const float* w, float* y, int64_t m, int64_t n,
                                    int64_t k) {
  std::vector<float> z(static_cast<size_t>(m * n));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, x, static_cast<int>(k), w, static_cast<int>(k), 0.0f, z.data(),
              static_cast<int>(n));
  for (int64_t e = 0; e < m * n; ++e) z[e] = 1.0f / (1.0f + std::exp(-z[e]));
  for (int64_t i = 0; i < m; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) sum += z[i * n + j];
    y[i] = sum;
  }
}
