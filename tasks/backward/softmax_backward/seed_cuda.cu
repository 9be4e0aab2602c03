// Tuner seed for softmax_backward on a GPU: a row belongs to a warp (ROW_THREADS 32, for short
// rows) or to a whole block; its threads sum dy * y over the row, then write
// dx = y * (dy - sum), reading y and dy twice (the second pass mostly from L2). VECTOR 4 moves
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

// kVector 4: the caller checked that cols is a multiple of 4 and every pointer 16-byte aligned,
// so every row starts 16-byte aligned.
template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    SoftmaxBackward(const float* __restrict__ y, const float* __restrict__ dy, float* __restrict__ dx,
                    int64_t rows, int64_t cols) {
  const int t = threadIdx.x % kRowThreads;
  FOR_EACH_ROW(r) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float dot = 0.0f;
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < cols / 4; i += kRowThreads) {
        const float4 a = reinterpret_cast<const float4*>(yr)[i];
        const float4 g = reinterpret_cast<const float4*>(dyr)[i];
        dot += a.x * g.x + a.y * g.y + a.z * g.z + a.w * g.w;
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) dot += yr[c] * dyr[c];
    }
    const float s = RowSum(dot);
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < cols / 4; i += kRowThreads) {
        const float4 a = reinterpret_cast<const float4*>(yr)[i];
        const float4 g = reinterpret_cast<const float4*>(dyr)[i];
        reinterpret_cast<float4*>(dxr)[i] =
            make_float4(a.x * (g.x - s), a.y * (g.y - s), a.z * (g.z - s), a.w * (g.w - s));
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) dxr[c] = yr[c] * (dyr[c] - s);
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

extern "C" void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols,
                                 cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 4 && cols % 4 == 0 && Aligned(y) && Aligned(dy) && Aligned(dx)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, SoftmaxBackward<4>)(y, dy, dx, rows, cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, SoftmaxBackward<1>)(y, dy, dx, rows, cols);
  }
}
#endif  // KSMITH_HOST
