// Tuner seed for softmax_bf16 on a GPU: a row belongs to a warp (ROW_THREADS 32, for short rows)
// or to a whole block; its threads find the row max, the sum of exp(x - max), then write
// exp(x - max) / sum, all in fp32, each output rounded once to bf16. x is read three times (the
// later passes mostly from L2). VECTOR 8 moves 16-byte vectors of 8 bf16 when cols % 8 == 0 and
// both pointers are 16-byte aligned (so every row is).
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune ROW_THREADS: 32, 256, 1024
#ifndef ROW_THREADS
#define ROW_THREADS 256
#endif

// @tune VECTOR: 1, 8
#ifndef VECTOR
#define VECTOR 8
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

// 8 bf16 in a 16-byte vector, widened to fp32.
__device__ __forceinline__ void Unpack(const uint4& v, float out[8]) {
  const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

// Calls f(value) (as fp32) for this thread's share of a row: 16-byte loads when kVector is 8
// (the caller checked that every row is 16-byte aligned and cols a multiple of 8).
template <int kVector, typename F>
__device__ __forceinline__ void ForRow(const __nv_bfloat16* row, int64_t cols, int t, F f) {
  if constexpr (kVector == 8) {
    for (int64_t i = t; i < cols / 8; i += kRowThreads) {
      float v[8];
      Unpack(reinterpret_cast<const uint4*>(row)[i], v);
#pragma unroll
      for (int j = 0; j < 8; ++j) f(v[j]);
    }
  } else {
    for (int64_t c = t; c < cols; c += kRowThreads) f(__bfloat162float(row[c]));
  }
}

// out[c] = bf16(f(in[c])) for this thread's share of a row, with 16-byte loads and stores when
// kVector is 8.
template <int kVector, typename F>
__device__ __forceinline__ void MapRow(const __nv_bfloat16* in, __nv_bfloat16* out, int64_t cols, int t,
                                       F f) {
  if constexpr (kVector == 8) {
    for (int64_t i = t; i < cols / 8; i += kRowThreads) {
      float v[8];
      Unpack(reinterpret_cast<const uint4*>(in)[i], v);
      uint4 packed;
      __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
      for (int j = 0; j < 4; ++j) pairs[j] = __floats2bfloat162_rn(f(v[2 * j]), f(v[2 * j + 1]));
      reinterpret_cast<uint4*>(out)[i] = packed;
    }
  } else {
    for (int64_t c = t; c < cols; c += kRowThreads) out[c] = __float2bfloat16_rn(f(__bfloat162float(in[c])));
  }
}

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    Softmax(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t rows, int64_t cols) {
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const __nv_bfloat16* xr = x + r * cols;
    float mx = -INFINITY;
    ForRow<kVector>(xr, cols, t, [&](float v) { mx = fmaxf(mx, v); });
    mx = RowReduce(mx, Max{});
    float sum = 0.0f;
    ForRow<kVector>(xr, cols, t, [&](float v) { sum += __expf(v - mx); });
    const float inv = 1.0f / RowReduce(sum, Sum{});
    MapRow<kVector>(xr, y + r * cols, cols, t, [&](float v) { return __expf(v - mx) * inv; });
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

extern "C" void softmax_bf16(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t rows, int64_t cols,
                             cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 8 && cols % 8 == 0 && Aligned(x) && Aligned(y)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, Softmax<8>)(x, y, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, Softmax<1>)(x, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
