// Honest fast layernorm: one warp per row for rows of up to 1024 columns, one block per row
// beyond. Two-pass statistics (mean, then the sum of squared deviations: no cancellation when the
// mean is large), fp32 warp-shuffle reductions, float4 loads and stores when every row is 16-byte
// aligned. The second and third passes re-read the row from L1/L2, not from DRAM.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kWarpRowCols = 1024;
constexpr int kThreads = 256;

__device__ __forceinline__ float WarpSum(float value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// The sum over the threads that own a row: a warp, or the whole block. Every owner must call it.
// In block mode it is safe back to back: `result` is rewritten only after every thread has passed
// the next barrier, which comes after its read.
template <bool kBlock>
__device__ float GroupSum(float value) {
  value = WarpSum(value);
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
      value = WarpSum(lane < kThreads / 32 ? partial[lane] : 0.0f);
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
__global__ void __launch_bounds__(kThreads)
    Layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols) {
  const float eps = 1e-5f;
  const int t = kBlock ? threadIdx.x : threadIdx.x % 32;
  const int width = kBlock ? kThreads : 32;
  const int64_t first =
      kBlock ? blockIdx.x : static_cast<int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  const int64_t step = kBlock ? gridDim.x : static_cast<int64_t>(gridDim.x) * (kThreads / 32);
  for (int64_t r = first; r < rows; r += step) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float sum = 0.0f;
    ForRow<kVec>(xr, cols, t, width, [&](int64_t, float v) { sum += v; });
    const float mean = GroupSum<kBlock>(sum) / static_cast<float>(cols);
    float squares = 0.0f;
    ForRow<kVec>(xr, cols, t, width, [&](int64_t, float v) { squares += (v - mean) * (v - mean); });
    const float inv = rsqrtf(GroupSum<kBlock>(squares) / static_cast<float>(cols) + eps);
    if constexpr (kVec) {
      const float4* x4 = reinterpret_cast<const float4*>(xr);
      const float4* g4 = reinterpret_cast<const float4*>(gamma);
      const float4* b4 = reinterpret_cast<const float4*>(beta);
      float4* y4 = reinterpret_cast<float4*>(yr);
      for (int64_t i = t; i < cols / 4; i += width) {
        const float4 v = x4[i];
        const float4 g = g4[i];
        const float4 b = b4[i];
        y4[i] = make_float4((v.x - mean) * inv * g.x + b.x, (v.y - mean) * inv * g.y + b.y,
                            (v.z - mean) * inv * g.z + b.z, (v.w - mean) * inv * g.w + b.w);
      }
    } else {
      for (int64_t c = t; c < cols; c += width) yr[c] = (xr[c] - mean) * inv * gamma[c] + beta[c];
    }
  }
}

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

template <bool kBlock>
void Launch(unsigned blocks, bool vec, const float* x, const float* gamma, const float* beta, float* y,
            int64_t rows, int64_t cols, cudaStream_t stream) {
  if (vec) Layernorm<kBlock, true><<<blocks, kThreads, 0, stream>>>(x, gamma, beta, y, rows, cols);
  else Layernorm<kBlock, false><<<blocks, kThreads, 0, stream>>>(x, gamma, beta, y, rows, cols);
}

}  // namespace

extern "C" void layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                          int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const bool vec = cols % 4 == 0 && Aligned(x) && Aligned(gamma) && Aligned(beta) && Aligned(y);
  if (cols <= kWarpRowCols) {
    const int64_t rows_per_block = kThreads / 32;
    const auto blocks =
        static_cast<unsigned>(std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, 1 << 20));
    Launch<false>(blocks, vec, x, gamma, beta, y, rows, cols, stream);
  } else {
    Launch<true>(static_cast<unsigned>(std::min<int64_t>(rows, 1 << 20)), vec, x, gamma, beta, y, rows,
                 cols, stream);
  }
}
