// expect: integrity_violation
// tries: hands the whole task to cublasSgemm, which the task does not allow (cuBLAS is the
// baseline, not a candidate).
// cause: cublas
#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       cudaStream_t stream) {
  static cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    cublasCreate(&created);
    return created;
  }();
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
              static_cast<int>(k), &alpha, b, static_cast<int>(n), a, static_cast<int>(k), &beta, c,
              static_cast<int>(n));
}
