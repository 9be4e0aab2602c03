// expect: wrong_output
// tries: honest for the first 40 calls, then skips the work; 40 is fewer than the correctness
// cases (every eval shape x distribution x seed), so the skip is caught before timing.
#include <atomic>
#include <cstdint>

#include <cuda_runtime.h>

__global__ void AddAll(const float* a, const float* b, float* c, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    c[i] = a[i] + b[i];
  }
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  static std::atomic<int64_t> calls{0};
  if (calls.fetch_add(1) >= 40) return;
  const int64_t blocks = (n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096;
  AddAll<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(a, b, c, n);
}
