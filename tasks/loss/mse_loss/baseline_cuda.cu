// CUDA baseline: what `F.mse_loss(pred, target)` costs in PyTorch eager, which runs two kernels:
// the elementwise (pred - target)^2 into a temporary (its vectorized elementwise kernel, 128
// threads x 4 elements, float4 when aligned), then `.mean()` of it, PyTorch's reduce kernel for a
// full reduction: 512 threads per block, fp32 partial sums with 4 loads in flight, block partials
// in a staging buffer, and the last block to finish (a semaphore) adds them and scales by 1/n.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kElementwiseThreads = 128;
constexpr int kReduceThreads = 512;
constexpr int kMaxReduceBlocks = 1024;

__device__ float g_staging[kMaxReduceBlocks];
__device__ unsigned int g_semaphore = 0;

__device__ __forceinline__ float Square(float p, float t) {
  const float d = p - t;
  return d * d;
}

template <bool kVector>
__global__ void SquaredError(const float* pred, const float* target, float* out, int64_t n) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * kElementwiseThreads + threadIdx.x) * 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kElementwiseThreads * 4;
  for (int64_t i = first; i < n; i += stride) {
    if (kVector && i + 4 <= n) {
      const float4 p = *reinterpret_cast<const float4*>(pred + i);
      const float4 t = *reinterpret_cast<const float4*>(target + i);
      *reinterpret_cast<float4*>(out + i) =
          make_float4(Square(p.x, t.x), Square(p.y, t.y), Square(p.z, t.z), Square(p.w, t.w));
    } else {
      for (int64_t j = i; j < i + 4 && j < n; ++j) out[j] = Square(pred[j], target[j]);
    }
  }
}

// Every thread of the block must call it.
__device__ float BlockSum(float value) {
  __shared__ float partial[kReduceThreads / 32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
  __syncthreads();
  if (threadIdx.x < 32) {
    value = threadIdx.x < kReduceThreads / 32 ? partial[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (threadIdx.x == 0) result = value;
  }
  __syncthreads();
  return result;
}

// The mean of x[0, n): four accumulators per thread, block sums staged, the last block adds them.
__global__ void Mean(const float* x, float* out, int64_t n) {
  __shared__ bool last;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kReduceThreads;
  int64_t i = static_cast<int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    acc[0] += x[i];
    acc[1] += x[i + stride];
    acc[2] += x[i + 2 * stride];
    acc[3] += x[i + 3 * stride];
  }
  for (; i < n; i += stride) acc[0] += x[i];
  const float sum = BlockSum((acc[0] + acc[1]) + (acc[2] + acc[3]));
  if (threadIdx.x == 0) {
    g_staging[blockIdx.x] = sum;
    __threadfence();
    last = atomicAdd(&g_semaphore, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    float value = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kReduceThreads) value += __ldcg(&g_staging[b]);
    value = BlockSum(value);
    if (threadIdx.x == 0) {
      out[0] = value * (1.0f / static_cast<float>(n));
      g_semaphore = 0;  // ready for the next call
    }
  }
}

// PyTorch's caching allocator makes eager temporaries nearly free: a buffer kept across calls,
// grown only when too small.
float* Scratch(size_t floats) {
  static float* buffer = nullptr;
  static size_t capacity = 0;
  if (floats > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, floats * sizeof(float)) != cudaSuccess) return nullptr;
    capacity = floats;
  }
  return buffer;
}

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void mse_loss(const float* pred, const float* target, float* loss, int64_t n,
                         cudaStream_t stream) {
  if (n <= 0) return;
  float* squares = Scratch(static_cast<size_t>(n));
  if (squares == nullptr) return;
  const int64_t per_block = int64_t{kElementwiseThreads} * 4;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((n + per_block - 1) / per_block, int64_t{1} << 30));
  if (Aligned(pred) && Aligned(target) && Aligned(squares)) {
    SquaredError<true><<<blocks, kElementwiseThreads, 0, stream>>>(pred, target, squares, n);
  } else {
    SquaredError<false><<<blocks, kElementwiseThreads, 0, stream>>>(pred, target, squares, n);
  }
  // About four loads per thread before the grid is capped.
  const int64_t reduce_per_block = int64_t{kReduceThreads} * 4;
  const auto reduce_blocks = static_cast<unsigned>(
      std::min<int64_t>((n + reduce_per_block - 1) / reduce_per_block, kMaxReduceBlocks));
  Mean<<<reduce_blocks, kReduceThreads, 0, stream>>>(squares, loss, n);
}
