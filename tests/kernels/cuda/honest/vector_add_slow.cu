// Honest slow vector_add: one thread per element, scalar loads, no tuning.
#include <cstdint>

#include <cuda_runtime.h>

__global__ void VectorAddNaive(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t blocks = (n + 127) / 128;
  VectorAddNaive<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(a, b, c, n);
}
