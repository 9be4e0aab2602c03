// CUDA baseline: what `torch.bmm(a, b)` costs in PyTorch eager with its default
// torch.backends.cuda.matmul.allow_tf32 = False: one cublasSgemmStridedBatched call in full FP32
// (no TF32). cuBLAS is column-major, so each row-major c[i] = a[i] b[i] is computed as
// c[i]^T = b[i]^T a[i]^T, which in column-major terms is gemm(N, N, n, m, k, b[i], a[i]): no
// transposes, no copies; the batch strides are k*n, m*k and m*n.
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
      std::fprintf(stderr, "batched_matmul baseline: cublasCreate failed\n");
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

extern "C" void batched_matmul(const float* a, const float* b, float* c, int64_t batch, int64_t m,
                               int64_t n, int64_t k, cudaStream_t stream) {
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0) return;
  cublasHandle_t handle = Handle();
  // The 32-bit API for dims and batch count (strides are 64-bit): every task shape is far below
  // INT_MAX.
  if (handle == nullptr || batch > INT_MAX || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    std::fprintf(stderr, "batched_matmul baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cublasStatus_t status = cublasSgemmStridedBatched(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
      static_cast<int>(k), &alpha, b, static_cast<int>(n), static_cast<long long>(k * n), a,
      static_cast<int>(k), static_cast<long long>(m * k), &beta, c, static_cast<int>(n),
      static_cast<long long>(m * n), static_cast<int>(batch));
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "batched_matmul baseline: cublasSgemmStridedBatched failed (%d)\n",
                 static_cast<int>(status));
  }
}
