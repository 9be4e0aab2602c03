// CUDA baseline: what softmax's backward (aten::_softmax_backward_data) costs in PyTorch eager,
// written the way its cunn_SoftMaxBackward is: one block per row (block size = cols rounded up
// to a warp multiple, at most 1024), a block sum of dy * y, then dx = y * (dy - sum), all in fp32.
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

__global__ void SoftmaxBackward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float dot = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dot += dyr[c] * yr[c];
    dot = BlockSum(dot);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dxr[c] = yr[c] * (dyr[c] - dot);
  }
}

}  // namespace

extern "C" void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols,
                                 cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 30);
  SoftmaxBackward<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(y, dy, dx, rows, cols);
}
