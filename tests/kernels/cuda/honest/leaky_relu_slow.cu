// Honest slow leaky_relu: one thread per element, scalar loads, no tuning.
#include <cstdint>

#include <cuda_runtime.h>

__global__ void LeakyReluNaive(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.01f * x[i];
}

extern "C" void leaky_relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t blocks = (n + 127) / 128;
  LeakyReluNaive<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(x, y, n);
}
