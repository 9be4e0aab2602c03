// CUDA baseline: what `F.cross_entropy(logits, target)` with probability targets costs in PyTorch
// eager, which runs `-(log_softmax(logits, 1) * target).sum() / rows` as its kernels:
// log_softmax the way cunn_SoftMaxForward does it (one block per row, block size = classes
// rounded up to a warp multiple, at most 1024; max, sum of exp(x - max), x - max - log(sum); fp32)
// into a temporary; the elementwise product with target into another (128 threads x 4 elements,
// float4 when aligned); the sum, PyTorch's reduce kernel for a full reduction (512 threads per
// block, fp32 partial sums, block partials staged and added by the last block to finish); then
// the negation and the division by rows, one tiny kernel each.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kMaxSoftmaxThreads = 1024;
constexpr int kElementwiseThreads = 128;
constexpr int kReduceThreads = 512;
constexpr int kMaxReduceBlocks = 1024;

__device__ float g_staging[kMaxReduceBlocks];
__device__ unsigned int g_semaphore = 0;

// Every thread of the block must call it; blockDim.x is a multiple of 32. Safe to call back to
// back: `result` is rewritten only after every thread has passed the next barrier.
template <typename Op>
__device__ float BlockReduce(float value, Op op, float identity) {
  __shared__ float partial[kMaxSoftmaxThreads / 32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : identity;
    for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
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

__global__ void LogSoftmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) mx = fmaxf(mx, xr[c]);
    mx = BlockReduce(mx, Max{}, -INFINITY);
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(xr[c] - mx);
    const float lse = logf(BlockReduce(sum, Sum{}, 0.0f));
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] - mx - lse;
  }
}

template <bool kVector>
__global__ void Multiply(const float* a, const float* b, float* out, int64_t n) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * kElementwiseThreads + threadIdx.x) * 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kElementwiseThreads * 4;
  for (int64_t i = first; i < n; i += stride) {
    if (kVector && i + 4 <= n) {
      const float4 p = *reinterpret_cast<const float4*>(a + i);
      const float4 q = *reinterpret_cast<const float4*>(b + i);
      *reinterpret_cast<float4*>(out + i) = make_float4(p.x * q.x, p.y * q.y, p.z * q.z, p.w * q.w);
    } else {
      for (int64_t j = i; j < i + 4 && j < n; ++j) out[j] = a[j] * b[j];
    }
  }
}

// out[0] = sum of x[0, n): four accumulators per thread, block sums staged, the last block adds them.
__global__ void SumAll(const float* x, float* out, int64_t n) {
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
  const float sum = BlockReduce((acc[0] + acc[1]) + (acc[2] + acc[3]), Sum{}, 0.0f);
  if (threadIdx.x == 0) {
    g_staging[blockIdx.x] = sum;
    __threadfence();
    last = atomicAdd(&g_semaphore, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    float value = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kReduceThreads) value += __ldcg(&g_staging[b]);
    value = BlockReduce(value, Sum{}, 0.0f);
    if (threadIdx.x == 0) {
      out[0] = value;
      g_semaphore = 0;  // ready for the next call
    }
  }
}

__global__ void Negate(const float* in, float* out) { out[0] = -in[0]; }

__global__ void Divide(const float* in, float* out, float divisor) { out[0] = in[0] / divisor; }

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

extern "C" void cross_entropy(const float* logits, const float* target, float* loss, int64_t rows,
                              int64_t classes, cudaStream_t stream) {
  if (rows <= 0 || classes <= 0) return;
  const int64_t count = rows * classes;
  // Each temporary starts on a 16-byte boundary (count rounded up to a multiple of 4).
  const int64_t padded = (count + 3) / 4 * 4;
  float* buffer = Scratch(2 * static_cast<size_t>(padded) + 4);
  if (buffer == nullptr) return;
  float* log_softmax = buffer;
  float* product = buffer + padded;
  float* scalars = buffer + 2 * padded;  // the sum, then its negation

  const int threads = static_cast<int>((std::min<int64_t>(classes, kMaxSoftmaxThreads) + 31) / 32 * 32);
  LogSoftmax<<<static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 30)), threads, 0, stream>>>(
      logits, log_softmax, rows, classes);

  const int64_t per_block = int64_t{kElementwiseThreads} * 4;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((count + per_block - 1) / per_block, int64_t{1} << 30));
  if (Aligned(target) && Aligned(log_softmax) && Aligned(product)) {
    Multiply<true><<<blocks, kElementwiseThreads, 0, stream>>>(log_softmax, target, product, count);
  } else {
    Multiply<false><<<blocks, kElementwiseThreads, 0, stream>>>(log_softmax, target, product, count);
  }

  const int64_t reduce_per_block = int64_t{kReduceThreads} * 4;
  const auto reduce_blocks = static_cast<unsigned>(
      std::min<int64_t>((count + reduce_per_block - 1) / reduce_per_block, kMaxReduceBlocks));
  SumAll<<<reduce_blocks, kReduceThreads, 0, stream>>>(product, scalars, count);
  Negate<<<1, 1, 0, stream>>>(scalars, scalars + 1);
  Divide<<<1, 1, 0, stream>>>(scalars + 1, loss, static_cast<float>(rows));
}
