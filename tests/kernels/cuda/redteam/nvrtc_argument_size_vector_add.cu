// expect: wrong_output
// tries: passes a 4-byte int where the kernel's parameter is an int64_t. A launch from the host
// would read 4 bytes past the argument as the count's upper half; the worker refuses the launch,
// so the outputs are never written, and the verdict says why.
// cause: argument 4 is 4 bytes
#include <cstdint>
#include <ksmith/launch.h>

#ifdef KSMITH_DEVICE
__global__ void Add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
#endif

#ifdef KSMITH_HOST
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  const int count = static_cast<int>(n);
  KSMITH_LAUNCH((n + 255) / 256, 256, 0, stream, Add)(a, b, c, count);
}
#endif
