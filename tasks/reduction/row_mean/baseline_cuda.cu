// CUDA baseline: what `x.mean(dim=-1)` costs in PyTorch eager, written plainly: one block per row
// (block size = cols rounded up to a warp multiple, at most 512), each thread a strided fp32
// partial sum, then a warp-shuffle block reduction, scaled by 1 / cols as PyTorch's MeanOps does.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kMaxThreads = 512;

// Every thread of the block must call it; blockDim.x is a multiple of 32.
__device__ float BlockSum(float value) {
  __shared__ float partial[kMaxThreads / 32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

__global__ void RowMean(const float* x, float* y, int64_t rows, int64_t cols) {
  const float factor = 1.0f / static_cast<float>(cols);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += xr[c];
    sum = BlockSum(sum);
    if (threadIdx.x == 0) y[r] = sum * factor;
  }
}

}  // namespace

extern "C" void row_mean(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 30);
  RowMean<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, y, rows, cols);
}
