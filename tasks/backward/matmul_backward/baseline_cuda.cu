// CUDA baseline: what the backward of `a @ b` costs in PyTorch eager with its default
// torch.backends.cuda.matmul.allow_tf32 = False: two cublasSgemm calls in full FP32 (no TF32),
// da = dc @ b^T and db = a^T @ dc. cuBLAS is column-major, and a row-major [r, c] matrix is the
// column-major [c, r] one, so da^T = b dc^T is sgemm(T, N, k, m, n, b, dc) and db^T = dc^T a is
// sgemm(N, T, n, k, m, dc, a): transposes in the call, no copies.
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
      std::fprintf(stderr, "matmul_backward baseline: cublasCreate failed\n");
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

extern "C" void matmul_backward(const float* a, const float* b, const float* dc, float* da, float* db,
                                int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  cublasHandle_t handle = Handle();
  // The 32-bit API: every task shape has dims far below INT_MAX.
  if (handle == nullptr || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    std::fprintf(stderr, "matmul_backward baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const int mi = static_cast<int>(m);
  const int ni = static_cast<int>(n);
  const int ki = static_cast<int>(k);
  // da^T [k x m, column-major] = b [k x n] (b^T stored, so OP_T) @ dc^T [n x m] (OP_N).
  cublasStatus_t status =
      cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, ki, mi, ni, &alpha, b, ni, dc, ni, &beta, da, ki);
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "matmul_backward baseline: cublasSgemm (da) failed (%d)\n", static_cast<int>(status));
  }
  // db^T [n x k, column-major] = dc^T [n x m] (OP_N) @ a [m x k] (a^T stored, so OP_T).
  status = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, ni, ki, mi, &alpha, dc, ni, a, ki, &beta, db, ni);
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "matmul_backward baseline: cublasSgemm (db) failed (%d)\n", static_cast<int>(status));
  }
}
