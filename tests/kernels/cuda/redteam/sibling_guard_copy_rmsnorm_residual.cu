// expect: integrity_violation
// tries: a correct rmsnorm_residual (one block per row) whose first thread also copies the 64
// bytes past the end of its first output (h) over the 64 bytes past the end of its second (y):
// only zones that differ from one output to the other see it.
// cause: out of bounds
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) RmsnormResidual(const float* x, const float* residual,
                                                           const float* weight, float* h, float* y,
                                                           int64_t rows, int64_t cols) {
  __shared__ float partial[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float squares = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
      const float v = x[r * cols + c] + residual[r * cols + c];
      h[r * cols + c] = v;
      squares += v * v;
    }
    partial[threadIdx.x] = squares;
    __syncthreads();
    for (int width = kThreads / 2; width > 0; width /= 2) {
      if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
      __syncthreads();
    }
    const float inv = rsqrtf(partial[0] / static_cast<float>(cols) + 1e-6f);
    __syncthreads();  // partial[0] is read before the next row rewrites it
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) y[r * cols + c] = h[r * cols + c] * inv * weight[c];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (int k = 0; k < 16; ++k) y[rows * cols + k] = h[rows * cols + k];
  }
}

}  // namespace

extern "C" void rmsnorm_residual(const float* x, const float* residual, const float* weight, float* h, float* y,
                                 int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const auto blocks = static_cast<unsigned>(rows < (1 << 16) ? rows : (1 << 16));
  RmsnormResidual<<<blocks, kThreads, 0, stream>>>(x, residual, weight, h, y, rows, cols);
}
