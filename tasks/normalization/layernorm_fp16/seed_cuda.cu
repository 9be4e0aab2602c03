// Tuner seed for layernorm_fp16 on a GPU: a row belongs to a warp (ROW_THREADS 32, for short
// rows) or to a whole block; two-pass statistics in fp32 (the mean, then the sum of squared
// deviations, so a large mean cancels nothing), then the normalization, each output rounded once
// to fp16, reading x three times (the later passes mostly from L2). VECTOR 8 moves 16-byte
// vectors of 8 halves (x, weight, bias, y) when cols % 8 == 0 and every pointer is 16-byte
// aligned (so every row is).
#include <cstdint>
#include <cuda_fp16.h>
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

// Sums `value` over the threads of a row group; every one of them gets the result, so every one
// of them must call it.
__device__ __forceinline__ float RowSum(float value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if constexpr (kRowThreads == 32) {
    return value;
  } else {
    __shared__ float partial[kRowThreads / 32];
    __syncthreads();  // every thread has read the previous call's partials
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
    __syncthreads();
    value = partial[0];
    for (int warp = 1; warp < kRowThreads / 32; ++warp) value += partial[warp];
    return value;
  }
}

// 8 halves in a 16-byte vector, widened to fp32.
__device__ __forceinline__ void Unpack(const uint4& v, float out[8]) {
  const __half2* pairs = reinterpret_cast<const __half2*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __half22float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

// Calls f(value) (as fp32) for this thread's share of a row: 16-byte loads when kVector is 8.
template <int kVector, typename F>
__device__ __forceinline__ void ForRow(const __half* row, int64_t cols, int t, F f) {
  if constexpr (kVector == 8) {
    for (int64_t i = t; i < cols / 8; i += kRowThreads) {
      float v[8];
      Unpack(reinterpret_cast<const uint4*>(row)[i], v);
#pragma unroll
      for (int j = 0; j < 8; ++j) f(v[j]);
    }
  } else {
    for (int64_t c = t; c < cols; c += kRowThreads) f(__half2float(row[c]));
  }
}

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    LayerNorm(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t rows,
              int64_t cols) {
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const __half* xr = x + r * cols;
    __half* yr = y + r * cols;
    float sum = 0.0f;
    ForRow<kVector>(xr, cols, t, [&](float v) { sum += v; });
    const float mean = RowSum(sum) / static_cast<float>(cols);
    float squares = 0.0f;
    ForRow<kVector>(xr, cols, t, [&](float v) { squares += (v - mean) * (v - mean); });
    const float variance = RowSum(squares) / static_cast<float>(cols);
    const float inv = 1.0f / sqrtf(variance + 1e-5f);
    if constexpr (kVector == 8) {
      for (int64_t i = t; i < cols / 8; i += kRowThreads) {
        float v[8];
        float w[8];
        float b[8];
        Unpack(reinterpret_cast<const uint4*>(xr)[i], v);
        Unpack(reinterpret_cast<const uint4*>(weight)[i], w);
        Unpack(reinterpret_cast<const uint4*>(bias)[i], b);
        uint4 packed;
        __half2* pairs = reinterpret_cast<__half2*>(&packed);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          pairs[j] = __floats2half2_rn((v[2 * j] - mean) * inv * w[2 * j] + b[2 * j],
                                       (v[2 * j + 1] - mean) * inv * w[2 * j + 1] + b[2 * j + 1]);
        }
        reinterpret_cast<uint4*>(yr)[i] = packed;
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) {
        yr[c] = __float2half_rn((__half2float(xr[c]) - mean) * inv * __half2float(weight[c]) +
                                __half2float(bias[c]));
      }
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

extern "C" void layernorm_fp16(const __half* x, const __half* weight, const __half* bias, __half* y,
                               int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 8 && cols % 8 == 0 && Aligned(x) && Aligned(y) && Aligned(weight) && Aligned(bias)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, LayerNorm<8>)(x, weight, bias, y, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, LayerNorm<1>)(x, weight, bias, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
