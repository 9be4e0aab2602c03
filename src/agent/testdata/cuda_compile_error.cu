#include <cstdint>
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + bb[i];
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  add_kernel<<<(n + 255) / 256, 256, 0, stream>>>(a, b, c, n)
}
