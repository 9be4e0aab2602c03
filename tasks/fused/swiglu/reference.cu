// Trusted GPU reference: y[r, c] = silu(x[r, c]) * x[r, cols + c] in double, the same math as
// reference.cc. A grid-stride loop over the elements of y.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

__global__ void SwigluReference(const float* x, double* y, int64_t rows, int64_t cols,
                                int64_t two_cols) {
  const int64_t n = rows * cols;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t r = i / cols;
    const int64_t c = i - r * cols;
    const float* gate = x + r * two_cols;
    const double v = gate[c];
    y[i] = v / (1.0 + exp(-v)) * static_cast<double>(gate[cols + c]);
  }
}

}  // namespace

extern "C" void swiglu_reference_cuda(const float* x, double* y, int64_t rows, int64_t cols,
                                      int64_t two_cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  constexpr int kThreads = 256;
  const int64_t n = rows * cols;
  // The grid-stride loop covers any n; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 20);
  SwigluReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, rows, cols, two_cols);
}
