// Tuner seed for cross_entropy on a GPU: one kernel. A row belongs to a warp (ROW_THREADS 32, for
// short rows) or to a whole block; its threads find the row max, then in one pass the sum of
// exp(x - max), the sum of the targets T and the sum of target * (x - max), so that the row's
// -sum_c target * log_softmax is T * log(sum exp) - sum target * (x - max). Each block adds its
// rows' losses into a partials array; the last block to finish (a __threadfence and an atomic
// ticket) adds the partials in a fixed order, writes the sum / rows and resets the ticket for the
// next call. The grid depends only on rows, so the result is deterministic. VECTOR 4 moves float4s
// when classes is a multiple of 4 and both inputs are 16-byte aligned.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune ROW_THREADS: 32, 256, 1024
#ifndef ROW_THREADS
#define ROW_THREADS 32
#endif

// @tune VECTOR: 1, 4
#ifndef VECTOR
#define VECTOR 4
#endif
namespace {

// A row belongs to a group of kRowThreads threads: one warp (several rows per block) or a whole
// block (one row per block at a time).
constexpr int kRowThreads = ROW_THREADS;
constexpr int kBlockThreads = kRowThreads < 256 ? 256 : kRowThreads;
constexpr int kRowsPerBlock = kBlockThreads / kRowThreads;
constexpr int kMaxBlocks = 1024;  // the size of the partials array, which bounds the grid

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

__device__ float g_partials[kMaxBlocks];
__device__ unsigned int g_ticket = 0;

struct Sum {
  __device__ float operator()(float p, float q) const { return p + q; }
};
struct Max {
  __device__ float operator()(float p, float q) const { return fmaxf(p, q); }
};

// Combines `value` over the threads of a row group; every one of them gets the result, so every
// one of them must call it.
template <typename Op>
__device__ float RowReduce(float value, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) {
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  if constexpr (kRowThreads == 32) {
    return value;
  } else {
    __shared__ float partial[kRowThreads / 32];
    __syncthreads();  // every thread has read the previous call's partials
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
    __syncthreads();
    value = partial[0];
    for (int warp = 1; warp < kRowThreads / 32; ++warp) value = op(value, partial[warp]);
    return value;
  }
}

// Sums `value` over the whole block; every thread gets the result, so every thread must call it.
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
  for (int warp = 1; warp < kThreads / 32; ++warp) value += partial[warp];
  return value;
}

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    CrossEntropy(const float* logits, const float* target, float* loss, int64_t rows, int64_t classes) {
  __shared__ bool last;
  const int t = threadIdx.x % kRowThreads;
  float block_loss = 0.0f;  // kept by thread t == 0 of each row group
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads; r < rows;
       r += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    float mx = -INFINITY;
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < classes / 4; i += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(xr)[i];
        mx = fmaxf(mx, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
      }
    } else {
      for (int64_t c = t; c < classes; c += kRowThreads) mx = fmaxf(mx, xr[c]);
    }
    mx = RowReduce(mx, Max{});
    float sum = 0.0f, t_sum = 0.0f, tx_sum = 0.0f;
    auto add = [&](float x, float w) {
      const float d = x - mx;
      sum += expf(d);
      t_sum += w;
      tx_sum += w * d;
    };
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < classes / 4; i += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(xr)[i];
        const float4 w = reinterpret_cast<const float4*>(tr)[i];
        add(v.x, w.x);
        add(v.y, w.y);
        add(v.z, w.z);
        add(v.w, w.w);
      }
    } else {
      for (int64_t c = t; c < classes; c += kRowThreads) add(xr[c], tr[c]);
    }
    sum = RowReduce(sum, Sum{});
    t_sum = RowReduce(t_sum, Sum{});
    tx_sum = RowReduce(tx_sum, Sum{});
    if (t == 0) block_loss += t_sum * logf(sum) - tx_sum;
  }
  block_loss = BlockSum<kBlockThreads>(block_loss);
  if (threadIdx.x == 0) {
    g_partials[blockIdx.x] = block_loss;
    __threadfence();  // the partial is visible to every block before the ticket is taken
    last = atomicAdd(&g_ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  float total = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlockThreads) total += __ldcg(&g_partials[b]);
  total = BlockSum<kBlockThreads>(total);
  if (threadIdx.x == 0) {
    loss[0] = static_cast<float>(static_cast<double>(total) / static_cast<double>(rows));
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

extern "C" void cross_entropy(const float* logits, const float* target, float* loss, int64_t rows,
                              int64_t classes, cudaStream_t stream) {
  if (rows <= 0 || classes <= 0) return;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, kMaxBlocks));
  if (VECTOR == 4 && classes % 4 == 0 && Aligned(logits) && Aligned(target)) {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, CrossEntropy<4>)(logits, target, loss, rows, classes);
  } else {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, CrossEntropy<1>)(logits, target, loss, rows, classes);
  }
}
#endif  // KSMITH_HOST
