// Honest fast row_max: one warp per row for rows of up to 1024 columns, one block per row beyond.
// Each thread keeps the maximum of a strided share of the row, starting from -inf (float4 loads
// when every row is 16-byte aligned), then warp-shuffle reductions of the partial maxima.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kWarpRowCols = 1024;
constexpr int kThreads = 256;

__device__ __forceinline__ float WarpMax(float value) {
  for (int offset = 16; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  return value;
}

// The maximum over the threads that own a row: a warp, or the whole block. Every owner must call
// it. In block mode it is safe back to back: `result` is rewritten only after every thread has passed
// the next barrier, which comes after its read.
template <bool kBlock>
__device__ float GroupMax(float value) {
  value = WarpMax(value);
  if constexpr (!kBlock) {
    return value;
  } else {
    __shared__ float partial[kThreads / 32];
    __shared__ float result;
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0) partial[warp] = value;
    __syncthreads();
    if (warp == 0) {
      value = WarpMax(lane < kThreads / 32 ? partial[lane] : -INFINITY);
      if (lane == 0) result = value;
    }
    __syncthreads();
    return result;
  }
}

// Calls f(column, value) for this thread's share of the row.
template <bool kVec, typename F>
__device__ __forceinline__ void ForRow(const float* row, int64_t cols, int t, int width, F f) {
  if constexpr (kVec) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    for (int64_t i = t; i < cols / 4; i += width) {
      const float4 v = row4[i];
      f(4 * i, v.x);
      f(4 * i + 1, v.y);
      f(4 * i + 2, v.z);
      f(4 * i + 3, v.w);
    }
  } else {
    for (int64_t c = t; c < cols; c += width) f(c, row[c]);
  }
}

template <bool kBlock, bool kVec>
__global__ void __launch_bounds__(kThreads) RowMax(const float* x, float* y, int64_t rows, int64_t cols) {
  const int t = kBlock ? threadIdx.x : threadIdx.x % 32;
  const int width = kBlock ? kThreads : 32;
  const int64_t first =
      kBlock ? blockIdx.x : static_cast<int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  const int64_t step = kBlock ? gridDim.x : static_cast<int64_t>(gridDim.x) * (kThreads / 32);
  for (int64_t r = first; r < rows; r += step) {
    float mx = -INFINITY;
    ForRow<kVec>(x + r * cols, cols, t, width, [&](int64_t, float v) { mx = fmaxf(mx, v); });
    mx = GroupMax<kBlock>(mx);
    if (t == 0) y[r] = mx;
  }
}

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

template <bool kBlock>
void Launch(unsigned blocks, bool vec, const float* x, float* y, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  if (vec) RowMax<kBlock, true><<<blocks, kThreads, 0, stream>>>(x, y, rows, cols);
  else RowMax<kBlock, false><<<blocks, kThreads, 0, stream>>>(x, y, rows, cols);
}

}  // namespace

extern "C" void row_max(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const bool vec = cols % 4 == 0 && Aligned(x);
  if (cols <= kWarpRowCols) {
    const int64_t rows_per_block = kThreads / 32;
    const auto blocks =
        static_cast<unsigned>(std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, 1 << 20));
    Launch<false>(blocks, vec, x, y, rows, cols, stream);
  } else {
    Launch<true>(static_cast<unsigned>(std::min<int64_t>(rows, 1 << 20)), vec, x, y, rows, cols, stream);
  }
}
