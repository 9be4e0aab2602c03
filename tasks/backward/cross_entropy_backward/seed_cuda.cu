// Tuner seed for cross_entropy_backward on a GPU: a row belongs to a warp (ROW_THREADS 32, for
// short rows) or to a whole block; its threads find the row max, then the sums of exp(x - max) and
// of the targets, then write (exp(x - max) * sum(target) / sum - target) / rows, reading the
// logits three times and the targets twice (the later passes mostly from L2). VECTOR 4 moves
// float4s when classes is a multiple of 4 and every pointer 16-byte aligned.
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

// Combines a and b over the threads of a row group with op; every one of them gets the results,
// so every one of them must call it.
template <typename Op>
__device__ __forceinline__ void RowReduce2(float& a, float& b, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) {
    a = op(a, __shfl_xor_sync(0xffffffffu, a, offset));
    b = op(b, __shfl_xor_sync(0xffffffffu, b, offset));
  }
  if constexpr (kRowThreads > 32) {
    __shared__ float partial_a[kRowThreads / 32];
    __shared__ float partial_b[kRowThreads / 32];
    __syncthreads();  // every thread has read the previous call's partials
    if (threadIdx.x % 32 == 0) {
      partial_a[threadIdx.x / 32] = a;
      partial_b[threadIdx.x / 32] = b;
    }
    __syncthreads();
    a = partial_a[0];
    b = partial_b[0];
    for (int warp = 1; warp < kRowThreads / 32; ++warp) {
      a = op(a, partial_a[warp]);
      b = op(b, partial_b[warp]);
    }
  }
}

struct Max {
  __device__ float operator()(float p, float q) const { return fmaxf(p, q); }
};
struct Sum {
  __device__ float operator()(float p, float q) const { return p + q; }
};

template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    CrossEntropyBackward(const float* __restrict__ logits, const float* __restrict__ target,
                         float* __restrict__ dlogits, int64_t rows, int64_t classes) {
  const int t = threadIdx.x % kRowThreads;
  const float inv_rows = 1.0f / static_cast<float>(rows);
  FOR_EACH_ROW(r) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    float* dr = dlogits + r * classes;
    float mx = -INFINITY;
    float unused = 0.0f;
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < classes / 4; i += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(xr)[i];
        mx = fmaxf(mx, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
      }
    } else {
      for (int64_t c = t; c < classes; c += kRowThreads) mx = fmaxf(mx, xr[c]);
    }
    RowReduce2(mx, unused, Max{});
    float sum = 0.0f;
    float target_sum = 0.0f;
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < classes / 4; i += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(xr)[i];
        const float4 g = reinterpret_cast<const float4*>(tr)[i];
        sum += (expf(v.x - mx) + expf(v.y - mx)) + (expf(v.z - mx) + expf(v.w - mx));
        target_sum += (g.x + g.y) + (g.z + g.w);
      }
    } else {
      for (int64_t c = t; c < classes; c += kRowThreads) {
        sum += expf(xr[c] - mx);
        target_sum += tr[c];
      }
    }
    RowReduce2(sum, target_sum, Sum{});
    // p * sum(target) = e * scale; for classes = 1, e = sum = 1 and target_sum = target, so the
    // result is exactly 0.
    const float scale = target_sum / sum;
    if constexpr (kVector == 4) {
      for (int64_t i = t; i < classes / 4; i += kRowThreads) {
        const float4 v = reinterpret_cast<const float4*>(xr)[i];
        const float4 g = reinterpret_cast<const float4*>(tr)[i];
        reinterpret_cast<float4*>(dr)[i] = make_float4((expf(v.x - mx) * scale - g.x) * inv_rows,
                                                       (expf(v.y - mx) * scale - g.y) * inv_rows,
                                                       (expf(v.z - mx) * scale - g.z) * inv_rows,
                                                       (expf(v.w - mx) * scale - g.w) * inv_rows);
      }
    } else {
      for (int64_t c = t; c < classes; c += kRowThreads) dr[c] = (expf(xr[c] - mx) * scale - tr[c]) * inv_rows;
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

extern "C" void cross_entropy_backward(const float* logits, const float* target, float* dlogits,
                                       int64_t rows, int64_t classes, cudaStream_t stream) {
  if (rows <= 0 || classes <= 0) return;
  if (VECTOR == 4 && classes % 4 == 0 && Aligned(logits) && Aligned(target) && Aligned(dlogits)) {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, CrossEntropyBackward<4>)(logits, target, dlogits, rows, classes);
  } else {
    KSMITH_LAUNCH(Blocks(rows), kBlockThreads, 0, stream, CrossEntropyBackward<1>)(logits, target, dlogits, rows, classes);
  }
}
#endif  // KSMITH_HOST
