// Honest slow relu: one thread per element, scalar loads, no tuning.
#include <cstdint>

#include <cuda_runtime.h>

__global__ void ReluNaive(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t blocks = (n + 127) / 128;
  ReluNaive<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(x, y, n);
}
