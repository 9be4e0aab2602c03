// Tuner seed for mse_loss on a GPU: one kernel. A grid of at most MAX_BLOCKS blocks strides over
// the vectors (float4 loads with VECTOR 4 when both are 16-byte aligned), each thread keeping an
// fp32 partial sum of (pred - target)^2; each block's tree sum goes to a partials array, and the
// last block to finish (a __threadfence and an atomic ticket) adds the partials in a fixed order,
// writes sum / n and resets the ticket for the next call. The grid depends only on n, so the
// result is deterministic. No scratch allocation: the partials are a static device array.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune THREADS: 256, 512
#ifndef THREADS
#define THREADS 256
#endif

// @tune VECTOR: 1, 4
#ifndef VECTOR
#define VECTOR 4
#endif

// @tune MAX_BLOCKS: 256, 1024
#ifndef MAX_BLOCKS
#define MAX_BLOCKS 1024
#endif
namespace {

constexpr int kPartialCapacity = 1024;  // >= every MAX_BLOCKS setting
static_assert(MAX_BLOCKS <= kPartialCapacity, "the partials array bounds the grid");

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

__device__ float g_partials[kPartialCapacity];
__device__ unsigned int g_ticket = 0;

// Sums value over the block; every thread gets the result, so every thread must call it.
// A template, as every __device__ function holding a __shared__ array here: nvcc gives a plain
// one a host stub that calls exit(), an import the audit refuses.
template <int kThreads>
__device__ float BlockSum(float value) {
  __shared__ float partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  __syncthreads();  // every thread has read the previous call's partials
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
  __syncthreads();
  value = partial[0];
  for (int w = 1; w < kThreads / 32; ++w) value += partial[w];
  return value;
}

__device__ __forceinline__ float Square(float p, float t) {
  const float d = p - t;
  return d * d;
}

template <int kVector>
__global__ void __launch_bounds__(THREADS)
    MseLoss(const float* pred, const float* target, float* loss, int64_t n) {
  __shared__ bool last;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * THREADS;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * THREADS + threadIdx.x;
  float sum = 0.0f;
  if constexpr (kVector == 4) {
    const int64_t quads = n / 4;
    for (int64_t q = first; q < quads; q += stride) {
      const float4 p = reinterpret_cast<const float4*>(pred)[q];
      const float4 t = reinterpret_cast<const float4*>(target)[q];
      sum += (Square(p.x, t.x) + Square(p.y, t.y)) + (Square(p.z, t.z) + Square(p.w, t.w));
    }
    for (int64_t i = quads * 4 + first; i < n; i += stride) sum += Square(pred[i], target[i]);
  } else {
    for (int64_t i = first; i < n; i += stride) sum += Square(pred[i], target[i]);
  }
  sum = BlockSum<THREADS>(sum);
  if (threadIdx.x == 0) {
    g_partials[blockIdx.x] = sum;
    __threadfence();  // the partial is visible to every block before the ticket is taken
    last = atomicAdd(&g_ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  float total = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += THREADS) total += __ldcg(&g_partials[b]);
  total = BlockSum<THREADS>(total);
  if (threadIdx.x == 0) {
    loss[0] = static_cast<float>(static_cast<double>(total) / static_cast<double>(n));
    g_ticket = 0;  // the next call starts counting from zero
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void mse_loss(const float* pred, const float* target, float* loss, int64_t n,
                         cudaStream_t stream) {
  if (n <= 0) return;
  const bool vector = VECTOR == 4 && Aligned(pred) && Aligned(target);
  const int64_t per_block = int64_t{THREADS} * (vector ? 4 : 1);
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((n + per_block - 1) / per_block, MAX_BLOCKS));
  if (vector) {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, MseLoss<4>)(pred, target, loss, n);
  } else {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, MseLoss<1>)(pred, target, loss, n);
  }
}
#endif  // KSMITH_HOST
