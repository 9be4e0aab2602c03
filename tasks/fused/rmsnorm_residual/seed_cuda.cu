// Tuner seed for rmsnorm_residual on a GPU: a row belongs to a warp (ROW_THREADS 32, for short
// rows) or to a whole block. Its threads write h = x + residual while summing the squares, then
// read back the h elements they wrote themselves (mostly from L2) to write y: one kernel, x and
// residual read once. VECTOR 4 moves float4s when every row is 16-byte aligned.
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
template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    RmsNormResidual(const float* x, const float* residual, const float* weight, float* h, float* y,
                    int64_t rows, int64_t cols) {
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const float* xr = x + r * cols;
    const float* rr = residual + r * cols;
    float* hr = h + r * cols;
    float* yr = y + r * cols;
    float squares = 0.0f;
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < cols / 4; i += kRowThreads) {
        const float4 a = reinterpret_cast<const float4*>(xr)[i];
        const float4 b = reinterpret_cast<const float4*>(rr)[i];
        const float4 v = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
        reinterpret_cast<float4*>(hr)[i] = v;
        squares += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const float v = xr[c] + rr[c];
        hr[c] = v;
        squares += v * v;
      }
    }
    const float mean_square = RowSum(squares) / static_cast<float>(cols);
    const float inv = 1.0f / sqrtf(mean_square + 1e-6f);
    // Each thread reads back only the h elements it wrote itself: program order makes them visible.
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < cols / 4; i += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(hr)[i];
        const float4 w = reinterpret_cast<const float4*>(weight)[i];
        reinterpret_cast<float4*>(yr)[i] =
            make_float4(v.x * inv * w.x, v.y * inv * w.y, v.z * inv * w.z, v.w * inv * w.w);
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) yr[c] = hr[c] * inv * weight[c];
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

extern "C" void rmsnorm_residual(const float* x, const float* residual, const float* weight, float* h,
                                 float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 4 && cols % 4 == 0 && Aligned(x) && Aligned(residual) && Aligned(weight) &&
      Aligned(h) && Aligned(y)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, RmsNormResidual<4>)(x, residual, weight, h, y, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, RmsNormResidual<1>)(x, residual, weight, h, y, rows, cols);
  }
}
#endif  // KSMITH_HOST
