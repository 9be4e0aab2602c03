// expect: integrity_violation
// tries: launches with <<<grid, block>>> and no stream, i.e. on the legacy default stream, not on
// the `stream` it was given.
// cause: stream
#include <cstdint>

#include <cuda_runtime.h>

__global__ void Add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  (void)stream;
  Add<<<static_cast<unsigned>((n + 255) / 256), 256>>>(a, b, c, n);
}
