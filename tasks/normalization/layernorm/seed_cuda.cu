// Tuner seed for layernorm on a GPU: a row belongs to a warp (ROW_THREADS 32, for short rows) or
// to a whole block; two-pass statistics (the mean, then the sum of squared deviations, so a large
// mean cancels nothing), then the normalization, reading x three times (the later passes mostly
// from L2). VECTOR 4 moves float4s when every row is 16-byte aligned.
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

// The rows this thread's group handles: the same sequence for every thread of the group, so the
// group's shuffles and barriers are reached by all of its threads.
#define FOR_EACH_ROW(r)                                                                          \
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads; \
       r < rows; r += static_cast<int64_t>(gridDim.x) * kRowsPerBlock)

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

struct Sum {
  __device__ float operator()(float p, float q) const { return p + q; }
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

// Calls f(value) for this thread's share of a row: float4 loads when kVector is 4 (the caller
// checked that every row is 16-byte aligned and cols a multiple of 4).
template <int kVector, typename F>
__device__ __forceinline__ void ForRow(const float* row, int64_t cols, int t, F f) {
  if constexpr (kVector == 4) {
    for (int64_t i = t; i < cols / 4; i += kRowThreads) {
      const float4 v = reinterpret_cast<const float4*>(row)[i];
      f(v.x);
      f(v.y);
      f(v.z);
      f(v.w);
    }
  } else {
    for (int64_t c = t; c < cols; c += kRowThreads) f(row[c]);
  }
}

// out[c] = f(c, in[c]) for this thread's share of a row, with float4 loads and stores when
// kVector is 4.
template <int kVector, typename F>
__device__ __forceinline__ void MapRow(const float* in, float* out, int64_t cols, int t, F f) {
  if constexpr (kVector == 4) {
    for (int64_t i = t; i < cols / 4; i += kRowThreads) {
      const float4 v = reinterpret_cast<const float4*>(in)[i];
      const int64_t c = 4 * i;
      reinterpret_cast<float4*>(out)[i] =
          make_float4(f(c, v.x), f(c + 1, v.y), f(c + 2, v.z), f(c + 3, v.w));
    }
  } else {
    for (int64_t c = t; c < cols; c += kRowThreads) out[c] = f(c, in[c]);
  }
}

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    LayerNorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
              int64_t cols) {
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const float* xr = x + r * cols;
    float sum = 0.0f;
    ForRow<kVector>(xr, cols, t, [&](float v) { sum += v; });
    const float mean = RowReduce(sum, Sum{}) / static_cast<float>(cols);
    float squares = 0.0f;
    ForRow<kVector>(xr, cols, t, [&](float v) { squares += (v - mean) * (v - mean); });
    const float variance = RowReduce(squares, Sum{}) / static_cast<float>(cols);
    const float inv = 1.0f / sqrtf(variance + 1e-5f);
    MapRow<kVector>(xr, y + r * cols, cols, t,
                    [&](int64_t c, float v) { return (v - mean) * inv * gamma[c] + beta[c]; });
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

extern "C" void layernorm(const float* x, const float* gamma, const float* beta, float* y,
                          int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 4 && cols % 4 == 0 && Aligned(x) && Aligned(y)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, LayerNorm<4>)(x, gamma, beta, y, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, LayerNorm<1>)(x, gamma, beta, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
