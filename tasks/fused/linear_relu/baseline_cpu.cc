// CPU baseline: the unfused sequence PyTorch eager runs for relu(linear(x, w, b)): addmm (b
// broadcast into every row of a temporary, then OpenBLAS sgemm with beta = 1 adds x @ w^T), then
// a separate single-threaded ReLU pass from the temporary into y.
#include <cblas.h>

#include <cstdint>
#include <vector>

extern "C" void linear_relu(const float* x, const float* w, const float* b, float* y, int64_t m,
                            int64_t n, int64_t k) {
  std::vector<float> z(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) z[i * n + j] = b[j];
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, x, static_cast<int>(k), w, static_cast<int>(k), 1.0f, z.data(),
              static_cast<int>(n));
  for (int64_t e = 0; e < m * n; ++e) y[e] = z[e] > 0.0f ? z[e] : 0.0f;
}
