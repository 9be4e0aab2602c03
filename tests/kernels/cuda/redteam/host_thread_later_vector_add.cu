// expect: integrity_violation
// tries: returns at once and launches the kernel ~20 ms later from a detached host thread, so that
// nothing is on `stream` when it is timed (and the result shows up only if the checker waits).
#include <chrono>
#include <cstdint>
#include <thread>

#include <cuda_runtime.h>

__global__ void Add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Add<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
  }).detach();
}
