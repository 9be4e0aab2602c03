// Honest fast softmax in the NVRTC form: softmax_fast.cu's code, its device part built by NVRTC.
// One warp per row for rows of up to 1024 columns, one block per row beyond.
// One read pass computes the row max and the sum of exp(x - max) together (online softmax: the
// running sum is rescaled when the max grows), combined across lanes with warp shuffles; a second
// pass writes exp(x - max) / sum. float4 loads and stores when every row is 16-byte aligned.
#include <cstdint>
#include <ksmith/launch.h>

constexpr int kWarpRowCols = 1024;  // up to here a warp owns a row (at most 32 values per lane)
constexpr int kThreads = 256;

#ifdef KSMITH_DEVICE
namespace {

struct MaxSum {
  float max;
  float sum;  // sum of exp(x - max) over the values seen
};

__device__ __forceinline__ void Add(MaxSum& acc, float v) {
  if (v > acc.max) {
    acc.sum = acc.sum * expf(acc.max - v) + 1.0f;  // expf(-inf) = 0 for the first value
    acc.max = v;
  } else {
    acc.sum += expf(v - acc.max);
  }
}

__device__ __forceinline__ MaxSum Combine(MaxSum a, MaxSum b) {
  const float max = fmaxf(a.max, b.max);
  if (max == -INFINITY) return {max, 0.0f};  // both empty: avoid (-inf) - (-inf)
  return {max, a.sum * expf(a.max - max) + b.sum * expf(b.max - max)};
}

__device__ __forceinline__ MaxSum WarpCombine(MaxSum acc) {
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxSum other;
    other.max = __shfl_xor_sync(0xffffffffu, acc.max, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, acc.sum, offset);
    acc = Combine(acc, other);
  }
  return acc;
}

// Thread `t` of the `width` threads that own a row.
template <bool kVec>
__device__ MaxSum RowStats(const float* xr, int64_t cols, int t, int width) {
  MaxSum acc{-INFINITY, 0.0f};
  if constexpr (kVec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    for (int64_t i = t; i < cols / 4; i += width) {
      const float4 v = x4[i];
      Add(acc, v.x);
      Add(acc, v.y);
      Add(acc, v.z);
      Add(acc, v.w);
    }
  } else {
    for (int64_t c = t; c < cols; c += width) Add(acc, xr[c]);
  }
  return acc;
}

template <bool kVec>
__device__ void WriteRow(const float* xr, float* yr, int64_t cols, int t, int width, MaxSum row) {
  const float inv = 1.0f / row.sum;
  if constexpr (kVec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (int64_t i = t; i < cols / 4; i += width) {
      const float4 v = x4[i];
      y4[i] = make_float4(expf(v.x - row.max) * inv, expf(v.y - row.max) * inv,
                          expf(v.z - row.max) * inv, expf(v.w - row.max) * inv);
    }
  } else {
    for (int64_t c = t; c < cols; c += width) yr[c] = expf(xr[c] - row.max) * inv;
  }
}

template <bool kVec>
__global__ void __launch_bounds__(kThreads) SoftmaxWarpPerRow(const float* x, float* y, int64_t rows,
                                                              int64_t cols) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kThreads / 32);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32; r < rows;
       r += warps) {
    const MaxSum row = WarpCombine(RowStats<kVec>(x + r * cols, cols, lane, 32));
    WriteRow<kVec>(x + r * cols, y + r * cols, cols, lane, 32, row);
  }
}

template <bool kVec>
__global__ void __launch_bounds__(kThreads) SoftmaxBlockPerRow(const float* x, float* y, int64_t rows,
                                                               int64_t cols) {
  __shared__ MaxSum partial[kThreads / 32];
  __shared__ MaxSum total;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    MaxSum acc = WarpCombine(RowStats<kVec>(x + r * cols, cols, threadIdx.x, kThreads));
    if (lane == 0) partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
      acc = lane < kThreads / 32 ? partial[lane] : MaxSum{-INFINITY, 0.0f};
      acc = WarpCombine(acc);
      if (lane == 0) total = acc;
    }
    __syncthreads();
    WriteRow<kVec>(x + r * cols, y + r * cols, cols, threadIdx.x, kThreads, total);
    // `total` and `partial` are rewritten only after the next row's first barrier, which every
    // thread reaches after it has read them here.
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // Every row starts 16-byte aligned only if the base pointers are and cols is a multiple of 4.
  const bool vec = cols % 4 == 0 && Aligned(x) && Aligned(y);
  if (cols <= kWarpRowCols) {
    const int64_t rows_per_block = kThreads / 32;
    const auto blocks =
        static_cast<unsigned>(std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, 1 << 20));
    if (vec) KSMITH_LAUNCH(blocks, kThreads, 0, stream, SoftmaxWarpPerRow<true>)(x, y, rows, cols);
    else KSMITH_LAUNCH(blocks, kThreads, 0, stream, SoftmaxWarpPerRow<false>)(x, y, rows, cols);
  } else {
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, 1 << 20));
    if (vec) KSMITH_LAUNCH(blocks, kThreads, 0, stream, SoftmaxBlockPerRow<true>)(x, y, rows, cols);
    else KSMITH_LAUNCH(blocks, kThreads, 0, stream, SoftmaxBlockPerRow<false>)(x, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
