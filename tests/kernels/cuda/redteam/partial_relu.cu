// expect: wrong_output
// tries: computes only the first half of the output and leaves the rest untouched.
#include <cstdint>

#include <cuda_runtime.h>

__global__ void ReluHalf(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  const int64_t half = (n + 1) / 2;  // at least one element, so n = 1 is "done"
  if (half <= 0) return;
  ReluHalf<<<static_cast<unsigned>((half + 255) / 256), 256, 0, stream>>>(x, y, half);
}
