// Tuner seed for add_layernorm on a GPU: a row belongs to a warp (ROW_THREADS 32, for short rows)
// or to a whole block. Its threads store s = x + residual in the row of y (a scratch row they
// read back themselves, mostly from L2) while summing it, then sum the squared deviations (two
// passes, so a large mean cancels nothing), then normalize y in place: one kernel, x and residual
// read once, no temporary. VECTOR 4 moves float4s when every row is 16-byte aligned.
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

// Sums `value` over the threads of a row group; every one of them gets the result, so every one
// of them must call it.
// A template: nvcc gives a plain (not template, not forceinline) __device__ function a host stub
// that calls exit(), which the audit refuses.
template <typename T>
__device__ T RowSum(T value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if constexpr (kRowThreads == 32) {
    return value;
  } else {
    __shared__ T partial[kRowThreads / 32];
    __syncthreads();  // every thread has read the previous call's partials
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
    __syncthreads();
    value = partial[0];
    for (int warp = 1; warp < kRowThreads / 32; ++warp) value += partial[warp];
    return value;
  }
}

// kVector 4: the caller checked that cols is a multiple of 4 and every pointer 16-byte aligned.
// Each thread reads back only the elements of y it wrote itself: program order makes them visible.
template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    AddLayerNorm(const float* x, const float* residual, const float* weight, const float* bias,
                 float* y, int64_t rows, int64_t cols) {
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const float* xr = x + r * cols;
    const float* rr = residual + r * cols;
    float* yr = y + r * cols;
    float sum = 0.0f;
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < cols / 4; i += kRowThreads) {
        const float4 a = reinterpret_cast<const float4*>(xr)[i];
        const float4 b = reinterpret_cast<const float4*>(rr)[i];
        const float4 s = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
        reinterpret_cast<float4*>(yr)[i] = s;
        sum += (s.x + s.y) + (s.z + s.w);
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const float s = xr[c] + rr[c];
        yr[c] = s;
        sum += s;
      }
    }
    const float mean = RowSum(sum) / static_cast<float>(cols);
    float squares = 0.0f;
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < cols / 4; i += kRowThreads) {
        const float4 s = reinterpret_cast<const float4*>(yr)[i];
        const float a = s.x - mean, b = s.y - mean, c = s.z - mean, d = s.w - mean;
        squares += (a * a + b * b) + (c * c + d * d);
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const float d = yr[c] - mean;
        squares += d * d;
      }
    }
    const float variance = RowSum(squares) / static_cast<float>(cols);
    const float inv = 1.0f / sqrtf(variance + 1e-5f);
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < cols / 4; i += kRowThreads) {
        const float4 s = reinterpret_cast<const float4*>(yr)[i];
        const float4 w = reinterpret_cast<const float4*>(weight)[i];
        const float4 b = reinterpret_cast<const float4*>(bias)[i];
        reinterpret_cast<float4*>(yr)[i] =
            make_float4((s.x - mean) * inv * w.x + b.x, (s.y - mean) * inv * w.y + b.y,
                        (s.z - mean) * inv * w.z + b.z, (s.w - mean) * inv * w.w + b.w);
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) {
        yr[c] = (yr[c] - mean) * inv * weight[c] + bias[c];
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

extern "C" void add_layernorm(const float* x, const float* residual, const float* weight,
                              const float* bias, float* y, int64_t rows, int64_t cols,
                              cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 4 && cols % 4 == 0 && Aligned(x) && Aligned(residual) && Aligned(weight) &&
      Aligned(bias) && Aligned(y)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, AddLayerNorm<4>)(x, residual, weight, bias, y, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, AddLayerNorm<1>)(x, residual, weight, bias, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
