// expect: runtime_error
// tries: reads through a wild device pointer ((float*)0x10) inside the kernel: an illegal memory
// access, which poisons the CUDA context of the process that ran it.
#include <cstdint>

#include <cuda_runtime.h>

__global__ void AddWild(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const float* wild = reinterpret_cast<const float*>(static_cast<uintptr_t>(0x10));
  if (i < n) c[i] = a[i] + b[i] + wild[i];
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  AddWild<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
}
