// expect: integrity_violation
// tries: defines cudaEventElapsedTime itself, with default visibility, so that if the evaluator's
// call resolves to this library's symbol every measurement reads 1 ns.
// cause: cudaEventElapsedTime
#include <cstdint>

#include <cuda_runtime.h>

extern "C" __attribute__((visibility("default"))) cudaError_t cudaEventElapsedTime(float* ms,
                                                                                   cudaEvent_t start,
                                                                                   cudaEvent_t end) {
  (void)start;
  (void)end;
  *ms = 1e-6f;
  return cudaSuccess;
}

__global__ void Add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  Add<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
}
