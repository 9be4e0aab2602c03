// Tuner seed for scaled_causal_softmax on a GPU: a row (head h, query i) belongs to a warp
// (ROW_THREADS 32, for short rows) or to a whole block. Its threads read only the i + 1 unmasked
// keys: the row max of 0.125 x, the sum of exp(0.125 x - max), then they write
// exp(0.125 x - max) / sum there and zeros after the diagonal without reading x: one kernel, no
// temporary, no -inf. VECTOR 4 moves float4s when s is a multiple of 4 and both pointers are
// 16-byte aligned; the lanes of a float4 past the diagonal are masked.
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
constexpr float kScale = 0.125f;

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

// kVector 4: the caller checked that s is a multiple of 4 and both pointers 16-byte aligned.
template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    ScaledCausalSoftmax(const float* x, float* y, int64_t heads, int64_t s) {
  const int t = threadIdx.x % kRowThreads;
  const int64_t rows = heads * s;
  // The rows this thread's group handles: the same sequence for every thread of the group, so
  // the group's shuffles and barriers are reached by all of its threads.
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
       row < rows; row += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t i = row % s;  // keys 0..i are unmasked
    const float* xr = x + row * s;
    float* yr = y + row * s;
    float mx = -INFINITY;
    float sum = 0.0f;
    if constexpr (kVector == 4) {
      const int64_t vectors = (i + 4) / 4;  // the float4s holding an unmasked key
      for (int64_t q = t; q < vectors; q += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(xr)[q];
        const int64_t c = 4 * q;
        mx = fmaxf(mx, kScale * v.x);  // c <= i always
        if (c + 1 <= i) mx = fmaxf(mx, kScale * v.y);
        if (c + 2 <= i) mx = fmaxf(mx, kScale * v.z);
        if (c + 3 <= i) mx = fmaxf(mx, kScale * v.w);
      }
      mx = RowReduce(mx, Max{});
      for (int64_t q = t; q < vectors; q += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(xr)[q];
        const int64_t c = 4 * q;
        sum += expf(kScale * v.x - mx);
        if (c + 1 <= i) sum += expf(kScale * v.y - mx);
        if (c + 2 <= i) sum += expf(kScale * v.z - mx);
        if (c + 3 <= i) sum += expf(kScale * v.w - mx);
      }
      const float inv = 1.0f / RowReduce(sum, Sum{});
      for (int64_t q = t; q < s / 4; q += kRowThreads) {
        float4 out = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (q < vectors) {
          const float4 v = reinterpret_cast<const float4*>(xr)[q];
          const int64_t c = 4 * q;
          out.x = expf(kScale * v.x - mx) * inv;
          if (c + 1 <= i) out.y = expf(kScale * v.y - mx) * inv;
          if (c + 2 <= i) out.z = expf(kScale * v.z - mx) * inv;
          if (c + 3 <= i) out.w = expf(kScale * v.w - mx) * inv;
        }
        reinterpret_cast<float4*>(yr)[q] = out;
      }
    } else {
      for (int64_t c = t; c <= i; c += kRowThreads) mx = fmaxf(mx, kScale * xr[c]);
      mx = RowReduce(mx, Max{});
      for (int64_t c = t; c <= i; c += kRowThreads) sum += expf(kScale * xr[c] - mx);
      const float inv = 1.0f / RowReduce(sum, Sum{});
      for (int64_t c = t; c < s; c += kRowThreads) {
        yr[c] = c <= i ? expf(kScale * xr[c] - mx) * inv : 0.0f;
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

extern "C" void scaled_causal_softmax(const float* x, float* y, int64_t heads, int64_t s,
                                      cudaStream_t stream) {
  if (heads <= 0 || s <= 0) return;
  if (VECTOR == 4 && s % 4 == 0 && Aligned(x) && Aligned(y)) {
    KSMITH_LAUNCH(Blocks(heads * s), kBlockThreads, 0, stream, ScaledCausalSoftmax<4>)(x, y, heads, s);
  } else {
    KSMITH_LAUNCH(Blocks(heads * s), kBlockThreads, 0, stream, ScaledCausalSoftmax<1>)(x, y, heads, s);
  }
}
#endif  // KSMITH_HOST
