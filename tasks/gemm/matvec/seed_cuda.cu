// Tuner seed for matvec on a GPU: a row of a belongs to a warp (ROW_THREADS 32, for short rows) or
// to a whole block; its threads sum their strided share of a[i, p] * x[p], then reduce with warp
// shuffles (and shared memory across warps). VECTOR 4 moves float4s when k is a multiple of 4
// and a and x are 16-byte aligned. x is small and stays in L1/L2; a is read once.
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
static_assert(kRowThreads == 32 || kRowsPerBlock == 1, "a multi-warp row group fills its block");

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

// Sums `value` over the kGroup threads of a row group; every one of them gets the result, so
// every one of them must call it.
template <int kGroup>
__device__ float RowSum(float value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  if constexpr (kGroup == 32) {
    return value;
  } else {
    __shared__ float partial[kGroup / 32];
    __syncthreads();  // every thread has read the previous call's partials
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
    __syncthreads();
    value = partial[0];
    for (int warp = 1; warp < kGroup / 32; ++warp) value += partial[warp];
    return value;
  }
}

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    Matvec(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
           int64_t m, int64_t k) {
  const int t = threadIdx.x % kRowThreads;
  // The rows of this thread's group: the same sequence for every thread of the group, so the
  // group's shuffles and barriers are reached by all of its threads.
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
       i < m; i += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const float* ai = a + i * k;
    float sum = 0.0f;
    if constexpr (kVector == 4) {
      const float4* a4 = reinterpret_cast<const float4*>(ai);
      const float4* x4 = reinterpret_cast<const float4*>(x);
      for (int64_t q = t; q < k / 4; q += kRowThreads) {
        const float4 av = a4[q];
        const float4 xv = x4[q];
        sum = fmaf(av.x, xv.x, sum);
        sum = fmaf(av.y, xv.y, sum);
        sum = fmaf(av.z, xv.z, sum);
        sum = fmaf(av.w, xv.w, sum);
      }
    } else {
      for (int64_t p = t; p < k; p += kRowThreads) sum = fmaf(ai[p], x[p], sum);
    }
    sum = RowSum<kRowThreads>(sum);
    if (t == 0) y[i] = sum;
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void matvec(const float* a, const float* x, float* y, int64_t m, int64_t k,
                       cudaStream_t stream) {
  if (m <= 0 || k <= 0) return;
  const int64_t needed = (m + kRowsPerBlock - 1) / kRowsPerBlock;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(needed, int64_t{1} << 30));
  if (VECTOR == 4 && k % 4 == 0 && Aligned(a) && Aligned(x)) {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, Matvec<4>)(a, x, y, m, k);
  } else {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, Matvec<1>)(a, x, y, m, k);
  }
}
#endif  // KSMITH_HOST
