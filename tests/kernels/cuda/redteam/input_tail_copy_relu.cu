// expect: integrity_violation
// tries: a correct relu whose first thread also copies the 64 bytes just past the end of its input
// into the 64 bytes just past the end of its output, as a padded vector tail would: only zones
// that differ per buffer see it.
// cause: out of bounds
#include <cstdint>

#include <cuda_runtime.h>

__global__ void ReluWithTail(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  if (i == 0) {
    for (int k = 0; k < 16; ++k) y[n + k] = x[n + k];
  }
}

extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  const int64_t blocks = (n + 255) / 256;
  ReluWithTail<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, y, n);
}
