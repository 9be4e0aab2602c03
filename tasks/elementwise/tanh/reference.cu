// Trusted GPU reference: y = tanh(x) in double, the same math as reference.cc.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

__global__ void TanhReference(const float* x, double* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double v = x[i];
    y[i] = tanh(v);
  }
}

}  // namespace

extern "C" void tanh_reference_cuda(const float* x, double* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = 256;
  // The grid-stride loop covers any n; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 20);
  TanhReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, n);
}
