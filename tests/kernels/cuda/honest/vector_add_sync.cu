// Honest vector_add written the way many first drafts are: scratch memory allocated and freed on
// every call, a copy through it, and a device-wide synchronization before returning. cudaFree and
// cudaDeviceSynchronize wait for the GPU inside the call, so the evaluator must time it without
// its blocking kernel instead of deadlocking or rejecting it.
#include <cstdint>

#include <cuda_runtime.h>

__global__ void AddInto(const float* a, const float* b, float* sum, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    sum[i] = a[i] + b[i];
  }
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  float* scratch = nullptr;
  if (cudaMalloc(&scratch, static_cast<size_t>(n) * sizeof(float)) != cudaSuccess) return;
  const int64_t blocks = (n + 255) / 256 < 65535 ? (n + 255) / 256 : 65535;
  AddInto<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(a, b, scratch, n);
  cudaMemcpyAsync(c, scratch, static_cast<size_t>(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  cudaDeviceSynchronize();
  cudaFree(scratch);
}
