// CPU baseline: torch.bmm on a CPU without MKL's batched GEMM: one OpenBLAS cblas_sgemm per
// batch entry (row-major, no transposes).
#include <cblas.h>
#include <cstdint>

extern "C" void batched_matmul(const float* a, const float* b, float* c, int64_t batch, int64_t m,
                               int64_t n, int64_t k) {
  for (int64_t s = 0; s < batch; ++s) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a + s * m * k, static_cast<int>(k), b + s * k * n,
                static_cast<int>(n), 0.0f, c + s * m * n, static_cast<int>(n));
  }
}
