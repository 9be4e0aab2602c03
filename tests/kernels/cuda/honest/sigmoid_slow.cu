// Honest slow sigmoid: one thread per element, computed in double and rounded once (slow on a
// GPU's FP64 units, and accurate).
#include <cstdint>

#include <cuda_runtime.h>

__global__ void SigmoidNaive(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double v = x[i];
  y[i] = static_cast<float>(1.0 / (1.0 + exp(-v)));
}

extern "C" void sigmoid(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t blocks = (n + 127) / 128;
  SigmoidNaive<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(x, y, n);
}
