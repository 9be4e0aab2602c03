// CUDA baseline: what `F.layer_norm(x, (cols,), weight, bias, eps=1e-5)` on fp16 tensors costs in
// PyTorch eager, written plainly: one block per row (block size = cols rounded up to a warp
// multiple, at most 1024), fp32 block reductions for the mean and the variance (PyTorch's
// acc_type for half), then the affine write rounded to fp16.
#include <algorithm>
#include <cstdint>

#include <cuda_fp16.h>
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

__global__ void Layernorm(const __half* x, const __half* weight, const __half* bias, __half* y,
                          int64_t rows, int64_t cols) {
  const float eps = 1e-5f;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const __half* xr = x + r * cols;
    __half* yr = y + r * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += __half2float(xr[c]);
    const float mean = BlockSum(sum) / static_cast<float>(cols);
    float squares = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = __half2float(xr[c]) - mean;
      squares += d * d;
    }
    const float inv = rsqrtf(BlockSum(squares) / static_cast<float>(cols) + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      yr[c] = __float2half_rn((__half2float(xr[c]) - mean) * inv * __half2float(weight[c]) +
                              __half2float(bias[c]));
    }
  }
}

}  // namespace

extern "C" void layernorm_fp16(const __half* x, const __half* weight, const __half* bias, __half* y,
                               int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 30);
  Layernorm<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, weight, bias, y, rows, cols);
}
