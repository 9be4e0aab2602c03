// expect: integrity_violation
// tries: a correct relu whose first thread also writes y[n..n+7] from y[n+8..n+15], the same zone
// 32 bytes further on: only zones whose bytes differ from position to position see it.
// cause: out of bounds
#include <cstdint>

#include <cuda_runtime.h>

__global__ void ReluWithTail(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  if (i == 0) {
    for (int k = 0; k < 8; ++k) y[n + k] = y[n + 8 + k];
  }
}

extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  const int64_t blocks = (n + 255) / 256;
  ReluWithTail<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, y, n);
}
