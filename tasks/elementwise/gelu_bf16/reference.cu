// Trusted GPU reference: exact (erf) GELU in double from the exact bf16 values, the same math as
// reference.cc.
#include <algorithm>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace {

__global__ void GeluBf16Reference(const __nv_bfloat16* x, double* y, int64_t n) {
  const double inv_sqrt2 = 1.0 / sqrt(2.0);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double v = static_cast<double>(__bfloat162float(x[i]));
    y[i] = 0.5 * v * (1.0 + erf(v * inv_sqrt2));
  }
}

}  // namespace

extern "C" void gelu_bf16_reference_cuda(const __nv_bfloat16* x, double* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = 256;
  // The grid-stride loop covers any n; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 20);
  GeluBf16Reference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, n);
}
