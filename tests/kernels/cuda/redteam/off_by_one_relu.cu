// expect: integrity_violation
// tries: an off-by-one bound (`i <= n`) that writes y[n], one element past the output. y[n] is
// relu(x[n]), the first bytes of the zone after x: where every zone holds the same bytes, a
// positive one copies through unchanged and the write looks like no write at all.
// cause: out of bounds
#include <cstdint>

#include <cuda_runtime.h>

__global__ void ReluInclusive(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  const int64_t blocks = (n + 1 + 255) / 256;
  ReluInclusive<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, y, n);
}
