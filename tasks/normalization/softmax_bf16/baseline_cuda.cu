// CUDA baseline: what `torch.softmax(x, dim=-1)` on a bf16 tensor costs in PyTorch eager,
// written the way its cunn_SoftMaxForward is: one block per row (block size = cols rounded up
// to a warp multiple, at most 1024), a block max, a block sum of exp(x - max), then
// exp(x - max) / sum, all in fp32 (PyTorch's accscalar_t for bf16), rounded to bf16 on store.
#include <algorithm>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace {

constexpr int kMaxThreads = 1024;

// Every thread of the block must call it; blockDim.x is a multiple of 32. Safe to call back to
// back: `result` is rewritten only after every thread has passed the next barrier.
template <typename Op>
__device__ float BlockReduce(float value, Op op, float identity) {
  __shared__ float partial[kMaxThreads / 32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) {
    value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  }
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : identity;
    for (int offset = 16; offset > 0; offset /= 2) {
      value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
    }
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};

__global__ void Softmax(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const __nv_bfloat16* xr = x + r * cols;
    __nv_bfloat16* yr = y + r * cols;
    float mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) mx = fmaxf(mx, __bfloat162float(xr[c]));
    mx = BlockReduce(mx, Max{}, -INFINITY);
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(__bfloat162float(xr[c]) - mx);
    sum = BlockReduce(sum, Sum{}, 0.0f);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      yr[c] = __float2bfloat16_rn(expf(__bfloat162float(xr[c]) - mx) / sum);
    }
  }
}

}  // namespace

extern "C" void softmax_bf16(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t rows, int64_t cols,
                             cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 30);
  Softmax<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, y, rows, cols);
}
