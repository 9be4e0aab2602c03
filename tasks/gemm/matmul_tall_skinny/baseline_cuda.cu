// CUDA baseline: what `a @ b` costs in PyTorch eager with its default
// torch.backends.cuda.matmul.allow_tf32 = False: cublasSgemm in full FP32 (no TF32), whatever the
// shape (cuBLAS picks its own kernel for a tall-skinny product). cuBLAS is column-major, so the
// row-major c = a b is computed as c^T = b^T a^T, which in column-major terms is
// sgemm(N, N, n, m, k, b, a): no transposes, no copies.
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
      std::fprintf(stderr, "matmul_tall_skinny baseline: cublasCreate failed\n");
      return static_cast<cublasHandle_t>(nullptr);
    }
    // CUBLAS_DEFAULT_MATH never uses TF32 for sgemm; the TF32 mode would be a different, less
    // accurate operation than the one candidates are held to.
    cublasSetMathMode(created, CUBLAS_DEFAULT_MATH);
    return created;
  }();
  return handle;
}

}  // namespace

extern "C" void matmul_tall_skinny(const float* a, const float* b, float* c, int64_t m, int64_t n,
                                   int64_t k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  cublasHandle_t handle = Handle();
  // The 32-bit API: every task shape has dims far below INT_MAX.
  if (handle == nullptr || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    std::fprintf(stderr, "matmul_tall_skinny baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cublasStatus_t status =
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                  static_cast<int>(k), &alpha, b, static_cast<int>(n), a, static_cast<int>(k),
                  &beta, c, static_cast<int>(n));
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "matmul_tall_skinny baseline: cublasSgemm failed (%d)\n",
                 static_cast<int>(status));
  }
}
