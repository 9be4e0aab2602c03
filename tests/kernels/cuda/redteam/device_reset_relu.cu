// expect: integrity_violation
// tries: calls cudaDeviceReset() on its first call, destroying every allocation, stream and event
// of the process, including the evaluator's.
// cause: cudaDeviceReset
#include <cstdint>

#include <cuda_runtime.h>

__global__ void Relu(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  static bool reset = false;
  if (!reset) {
    reset = true;
    cudaDeviceReset();
  }
  Relu<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n);
}
