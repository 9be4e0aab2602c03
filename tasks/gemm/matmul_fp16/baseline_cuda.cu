// CUDA baseline: what `a @ b` on fp16 tensors costs in PyTorch eager: cublasGemmEx with fp16
// (CUDA_R_16F) inputs and output, CUBLAS_COMPUTE_32F (fp32 accumulation, fp32 alpha and beta) and
// tensor cores allowed, as at::cuda::blas::gemm<at::Half> calls it. One difference: PyTorch's
// default allow_fp16_reduced_precision_reduction = True lets cuBLAS reduce split-K partial sums
// in fp16; the baseline sets CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (PyTorch's setting
// when that flag is False) so that it is held to the same fp32-accumulation contract as
// candidates. cuBLAS is column-major, so the row-major c = a b is computed as c^T = b^T a^T, which
// in column-major terms is gemm(N, N, n, m, k, b, a): no transposes, no copies.
#include <climits>
#include <cstdint>
#include <cstdio>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

// One handle for the process, created on first use (cublasCreate costs milliseconds) and never
// destroyed: the worker exits with it. A function-local static makes creation thread-safe.
cublasHandle_t Handle() {
  static cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    if (cublasCreate(&created) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "matmul_fp16 baseline: cublasCreate failed\n");
      return static_cast<cublasHandle_t>(nullptr);
    }
    // Default math uses tensor cores for fp16 GEMMs; partial sums stay fp32 throughout.
    cublasSetMathMode(created, static_cast<cublasMath_t>(
                                   CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    return created;
  }();
  return handle;
}

}  // namespace

extern "C" void matmul_fp16(const __half* a, const __half* b, __half* c, int64_t m, int64_t n,
                            int64_t k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  cublasHandle_t handle = Handle();
  // The 32-bit API: every task shape has dims far below INT_MAX.
  if (handle == nullptr || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    std::fprintf(stderr, "matmul_fp16 baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cublasStatus_t status = cublasGemmEx(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
      &alpha, b, CUDA_R_16F, static_cast<int>(n), a, CUDA_R_16F, static_cast<int>(k), &beta, c,
      CUDA_R_16F, static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "matmul_fp16 baseline: cublasGemmEx failed (%d)\n", static_cast<int>(status));
  }
}
