// Tuner seed for log_softmax on a GPU: a row belongs to a warp (ROW_THREADS 32, for short rows) or
// to a whole block; its threads find the row max, the sum of exp(x - max), then write
// (x - max) - log(sum), reading x three times (the later passes mostly from L2). VECTOR 4 moves
// float4s when every row is 16-byte aligned.
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

// out[c] = f(in[c]) for this thread's share of a row, with float4 loads and stores when kVector
// is 4.
template <int kVector, typename F>
__device__ __forceinline__ void MapRow(const float* in, float* out, int64_t cols, int t, F f) {
  if constexpr (kVector == 4) {
    for (int64_t i = t; i < cols / 4; i += kRowThreads) {
      const float4 v = reinterpret_cast<const float4*>(in)[i];
      reinterpret_cast<float4*>(out)[i] = make_float4(f(v.x), f(v.y), f(v.z), f(v.w));
    }
  } else {
    for (int64_t c = t; c < cols; c += kRowThreads) out[c] = f(in[c]);
  }
}

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    LogSoftmax(const float* x, float* y, int64_t rows, int64_t cols) {
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const float* xr = x + r * cols;
    float mx = -INFINITY;
    ForRow<kVector>(xr, cols, t, [&](float v) { mx = fmaxf(mx, v); });
    mx = RowReduce(mx, Max{});
    float sum = 0.0f;
    ForRow<kVector>(xr, cols, t, [&](float v) { sum += expf(v - mx); });
    const float log_sum = logf(RowReduce(sum, Sum{}));
    MapRow<kVector>(xr, y + r * cols, cols, t, [&](float v) { return (v - mx) - log_sum; });
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

extern "C" void log_softmax(const float* x, float* y, int64_t rows, int64_t cols,
                            cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 4 && cols % 4 == 0 && Aligned(x) && Aligned(y)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, LogSoftmax<4>)(x, y, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, LogSoftmax<1>)(x, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
