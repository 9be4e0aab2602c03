// expect: integrity_violation
// tries: honest for the first 90 calls (more than the 72 correctness cases of relu), then
// skips the work and leaves the previous output in place, hoping only the timed calls see it.
// args: --timing-budget 1
#include <atomic>
#include <cstdint>

#include <cuda_runtime.h>

__global__ void ReluAll(const float* x, float* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }
}

extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  static std::atomic<int64_t> calls{0};
  if (calls.fetch_add(1) >= 90) return;
  const int64_t blocks = (n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096;
  ReluAll<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, y, n);
}
