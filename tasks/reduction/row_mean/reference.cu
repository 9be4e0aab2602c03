// Trusted GPU reference: the mean of each row in double (the sum, then a divide by cols). One
// block per row, a block reduction.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

// Every thread of the block must call it; every thread gets the block's sum.
__device__ double BlockSum(double value) {
  __shared__ double partial[kThreads / 32];
  __shared__ double result;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = 0.0;
    for (int i = 0; i < kThreads / 32; ++i) value += partial[i];
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

__global__ void RowMeanReference(const float* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    double sum = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += xr[c];
    sum = BlockSum(sum);
    if (threadIdx.x == 0) y[r] = sum / static_cast<double>(cols);
  }
}

}  // namespace

extern "C" void row_mean_reference_cuda(const float* x, double* y, int64_t rows, int64_t cols,
                                       cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // The row loop covers any row count; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 20);
  RowMeanReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, rows, cols);
}
