// Trusted GPU reference: the exact (erf) GELU derivative in double, the same math as
// reference.cc: dx = dy * (Phi(x) + x * phi(x)).
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

__global__ void GeluBackwardReference(const float* x, const float* dy, double* dx, int64_t n) {
  const double inv_sqrt2 = 1.0 / sqrt(2.0);
  const double inv_sqrt_2pi = 1.0 / sqrt(2.0 * 3.14159265358979323846);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double v = x[i];
    const double cdf = 0.5 * (1.0 + erf(v * inv_sqrt2));
    const double pdf = exp(-0.5 * v * v) * inv_sqrt_2pi;
    dx[i] = static_cast<double>(dy[i]) * (cdf + v * pdf);
  }
}

}  // namespace

extern "C" void gelu_backward_reference_cuda(const float* x, const float* dy, double* dx, int64_t n,
                                             cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = 256;
  // The grid-stride loop covers any n; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 20);
  GeluBackwardReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, dy, dx, n);
}
