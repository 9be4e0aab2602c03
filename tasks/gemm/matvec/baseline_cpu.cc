// CPU baseline: torch.mv on a CPU: OpenBLAS cblas_sgemv (row-major, no transpose).
#include <cblas.h>
#include <cstdint>

extern "C" void matvec(const float* a, const float* x, float* y, int64_t m, int64_t k) {
  cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(m), static_cast<int>(k), 1.0f, a,
              static_cast<int>(k), x, 1, 0.0f, y, 1);
}
