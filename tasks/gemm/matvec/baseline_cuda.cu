// CUDA baseline: what `torch.mv(a, x)` costs in PyTorch eager: cublasSgemv in full FP32. cuBLAS
// is column-major, so the row-major a [m, k] is the column-major k x m matrix a^T, and
// y = a x = (a^T)^T x is gemv(T, k, m, a, lda = k): no copies.
#include <climits>
#include <cstdint>
#include <cstdio>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace {

// One handle for the process, created on first use (cublasCreate costs milliseconds) and never
// destroyed: the worker exits with it. A function-local static makes creation thread-safe.
cublasHandle_t Handle() {
  static cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    if (cublasCreate(&created) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "matvec baseline: cublasCreate failed\n");
      return static_cast<cublasHandle_t>(nullptr);
    }
    cublasSetMathMode(created, CUBLAS_DEFAULT_MATH);
    return created;
  }();
  return handle;
}

}  // namespace

extern "C" void matvec(const float* a, const float* x, float* y, int64_t m, int64_t k,
                       cudaStream_t stream) {
  if (m <= 0 || k <= 0) return;
  cublasHandle_t handle = Handle();
  // The 32-bit API: every task shape has dims far below INT_MAX.
  if (handle == nullptr || m > INT_MAX || k > INT_MAX) {
    std::fprintf(stderr, "matvec baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cublasStatus_t status =
      cublasSgemv(handle, CUBLAS_OP_T, static_cast<int>(k), static_cast<int>(m), &alpha, a,
                  static_cast<int>(k), x, 1, &beta, y, 1);
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "matvec baseline: cublasSgemv failed (%d)\n", static_cast<int>(status));
  }
}
