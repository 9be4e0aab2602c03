// expect: wrong_output
// tries: passes a double where the kernel's parameter is an int64_t: the same 8 bytes, so a size
// check alone would launch it, and the kernel would read the double's bits as the count. The
// worker's launcher compares kinds too and refuses the launch, so the verdict says why.
// cause: argument 3 is floating point
#include <cstdint>
#include <ksmith/launch.h>

#ifdef KSMITH_DEVICE
__global__ void Relu(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
#endif

#ifdef KSMITH_HOST
extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  const double count = static_cast<double>(n);
  KSMITH_LAUNCH((n + 255) / 256, 256, 0, stream, Relu)(x, y, count);
}
#endif
