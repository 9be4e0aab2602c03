// Tuner seed for argmax on a GPU: a row belongs to a warp (ROW_THREADS 32, for short rows) or to a
// whole block. Each thread scans its share of the row in increasing column order, keeping the
// first maximum it sees (strict >); the group then combines (value, index) pairs keeping the
// larger value and, on equal values, the lower index, i.e. it maximizes (value, -index), so the
// row's FIRST maximum wins however the columns were split. VECTOR 4 moves float4s when
// cols % 4 == 0 and x is 16-byte aligned (so every row is).
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

constexpr int kRowThreads = ROW_THREADS;
constexpr int kBlockThreads = kRowThreads < 256 ? 256 : kRowThreads;
constexpr int kRowsPerBlock = kBlockThreads / kRowThreads;
constexpr int64_t kNone = INT64_MAX;  // the index of a thread that saw no element

struct Best {
  float value;
  int64_t index;
};

// The rows this thread's group handles: the same sequence for every thread of the group, so the
// group's shuffles and barriers are reached by all of its threads.
#define FOR_EACH_ROW(r)                                                                          \
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads; \
       r < rows; r += static_cast<int64_t>(gridDim.x) * kRowsPerBlock)

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

// The larger (value, -index): on equal values the lower index wins.
__device__ __forceinline__ Best Better(Best a, Best b) {
  return a.value > b.value || (a.value == b.value && a.index < b.index) ? a : b;
}

// Folds column c's value into a thread's running best; a thread visits its columns in increasing
// order, so strict > keeps the first maximum.
__device__ __forceinline__ void Visit(Best& best, float v, int64_t c) {
  if (v > best.value || best.index == kNone) best = Best{v, c};
}

// Combines over the threads of a row group; every one of them gets the result, so every one of
// them must call it.
__device__ __forceinline__ Best RowBest(Best best) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const Best other{__shfl_xor_sync(0xffffffffu, best.value, offset),
                     __shfl_xor_sync(0xffffffffu, best.index, offset)};
    best = Better(best, other);
  }
  if constexpr (kRowThreads == 32) {
    return best;
  } else {
    __shared__ Best partial[kRowThreads / 32];
    __syncthreads();  // every thread has read the previous call's partials
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = best;
    __syncthreads();
    best = partial[0];
    for (int warp = 1; warp < kRowThreads / 32; ++warp) best = Better(best, partial[warp]);
    return best;
  }
}

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads) Argmax(const float* x, int32_t* y, int64_t rows,
                                                        int64_t cols) {
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const float* xr = x + r * cols;
    Best best{-INFINITY, kNone};
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < cols / 4; i += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(xr)[i];
        Visit(best, v.x, 4 * i);
        Visit(best, v.y, 4 * i + 1);
        Visit(best, v.z, 4 * i + 2);
        Visit(best, v.w, 4 * i + 3);
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) Visit(best, xr[c], c);
    }
    best = RowBest(best);
    if (t == 0) y[r] = static_cast<int32_t>(best.index);
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

extern "C" void argmax(const float* x, int32_t* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 4 && cols % 4 == 0 && Aligned(x)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, Argmax<4>)(x, y, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, Argmax<1>)(x, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
