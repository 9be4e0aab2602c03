// Tuner seed for cumsum on a GPU: a row belongs to a warp (ROW_THREADS 32, for short rows) or to a
// whole block, and is scanned one chunk of ROW_THREADS x VECTOR elements at a time, reading x and
// writing y once. Within a chunk each thread scans its VECTOR consecutive elements (one float4 when
// VECTOR is 4, every row is 16-byte aligned and cols a multiple of 4) in registers, the threads'
// totals are scanned with warp shuffles, the warps' totals through shared memory, and the running
// total of the previous chunks (the carry) is added. Sums are fp32.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune ROW_THREADS: 32, 256, 1024
#ifndef ROW_THREADS
#define ROW_THREADS 256
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
constexpr int kWarps = kRowThreads / 32;

// The rows this thread's group handles: the same sequence for every thread of the group, so the
// group's shuffles and barriers are reached by all of its threads.
#define FOR_EACH_ROW(r)                                                                          \
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads; \
       r < rows; r += static_cast<int64_t>(gridDim.x) * kRowsPerBlock)

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

// The sum of `value` over the group's threads before this one (0 for the first), in thread order;
// `total` gets the sum over all of them. Every thread of the group must call it.
__device__ __forceinline__ float GroupExclusiveScan(float value, float& total) {
  const int lane = threadIdx.x % 32;
  float inclusive = value;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const float other = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += other;
  }
  float exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
  if (lane == 0) exclusive = 0.0f;
  if constexpr (kWarps == 1) {
    total = __shfl_sync(0xffffffffu, inclusive, 31);
    return exclusive;
  } else {
    __shared__ float warp_sums[kWarps];
    const int warp = threadIdx.x / 32;
    __syncthreads();  // every thread has read the previous call's warp sums
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {  // inclusive scan of the warp sums, in place
      float sum = lane < kWarps ? warp_sums[lane] : 0.0f;
#pragma unroll
      for (int offset = 1; offset < kWarps; offset *= 2) {
        const float other = __shfl_up_sync(0xffffffffu, sum, offset);
        if (lane >= offset) sum += other;
      }
      if (lane < kWarps) warp_sums[lane] = sum;
    }
    __syncthreads();
    total = warp_sums[kWarps - 1];
    return (warp > 0 ? warp_sums[warp - 1] : 0.0f) + exclusive;
  }
}

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    Cumsum(const float* x, float* y, int64_t rows, int64_t cols) {
  constexpr int64_t kChunk = int64_t{kRowThreads} * kVector;
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float carry = 0.0f;
    // The same chunks for every thread of the group; past the row's end a thread adds zeros.
    for (int64_t base = 0; base < cols; base += kChunk) {
      const int64_t c = base + int64_t{t} * kVector;
      float v[kVector];
      if constexpr (kVector == 4) {
        // cols is a multiple of 4, so a float4 that starts inside the row ends inside it.
        const float4 q = c < cols ? *reinterpret_cast<const float4*>(xr + c) : make_float4(0, 0, 0, 0);
        v[0] = q.x;
        v[1] = q.y;
        v[2] = q.z;
        v[3] = q.w;
      } else {
        v[0] = c < cols ? xr[c] : 0.0f;
      }
#pragma unroll
      for (int k = 1; k < kVector; ++k) v[k] += v[k - 1];
      float total;
      const float before = carry + GroupExclusiveScan(v[kVector - 1], total);
      if constexpr (kVector == 4) {
        if (c < cols) {
          *reinterpret_cast<float4*>(yr + c) =
              make_float4(before + v[0], before + v[1], before + v[2], before + v[3]);
        }
      } else {
        if (c < cols) yr[c] = before + v[0];
      }
      carry += total;
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

unsigned Blocks(int64_t rows) {
  const int64_t needed = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return static_cast<unsigned>(std::min<int64_t>(needed, int64_t{1} << 30));
}

}  // namespace

extern "C" void cumsum(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 4 && cols % 4 == 0 && Aligned(x) && Aligned(y)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, Cumsum<4>)(x, y, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, Cumsum<1>)(x, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
