// CUDA baseline: what `F.layer_norm(x, (cols,), gamma, beta, eps=1e-5)` costs in PyTorch eager,
// written plainly: one block per row (block size = cols rounded up to a warp multiple, at most
// 1024), block reductions for the mean and the variance, then the affine write, all in fp32.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kMaxThreads = 1024;

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

__global__ void Layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                          int64_t cols) {
  const float eps = 1e-5f;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += xr[c];
    const float mean = BlockSum(sum) / static_cast<float>(cols);
    float squares = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = xr[c] - mean;
      squares += d * d;
    }
    const float inv = rsqrtf(BlockSum(squares) / static_cast<float>(cols) + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      yr[c] = (xr[c] - mean) * inv * gamma[c] + beta[c];
    }
  }
}

}  // namespace

extern "C" void layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                          int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 30);
  Layernorm<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, gamma, beta, y, rows, cols);
}
