// Tuner seed for rmsnorm_backward on a GPU. A row belongs to a group of ROW_THREADS threads (a warp
// for short rows, or a whole block); a bounded number of groups (BLOCKS blocks, fewer when the
// partial buffer below cannot hold them) walk the rows in a grid-stride loop. Per row: one pass for
// the sum of squares and the row sum of g * x (g = dy * weight), a second for dx and for the row's
// dy * x * rstd added into the group's own partial dweight, a slice of a static device buffer that
// only this group's threads touch, each column always by the same thread (no atomics, no race). A
// second small kernel adds the groups' partials in group order: the result is deterministic. When a
// single group is left (one row, or rows too long for the buffer), it writes dweight directly and
// the second kernel is skipped. VECTOR 4 moves float4s when cols is a multiple of 4 and every
// pointer 16-byte aligned.
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

// @tune BLOCKS: 256, 1024
#ifndef BLOCKS
#define BLOCKS 256
#endif
namespace {

constexpr int kRowThreads = ROW_THREADS;
constexpr int kBlockThreads = kRowThreads < 256 ? 256 : kRowThreads;
constexpr int kRowsPerBlock = kBlockThreads / kRowThreads;
constexpr float kEps = 1e-6f;

// Partial dweight, group g at [g * cols, (g + 1) * cols). 16 MiB: small enough to stay in L2 while
// the groups update it. float4 for 16-byte alignment. Calls on one stream run one after another,
// so one buffer serves every call.
constexpr int64_t kPartialFloats = int64_t{1} 
<< 22;

constexpr int kColumns = 32;  // columns per block of the second kernel
constexpr int kLanes = 8;     // group lanes per column

}  // namespace

#ifdef KSMITH_DEVICE
namespace {
__device__ float4 g_partials[kPartialFloats / 4];

// Sums a and b over the threads of a row group; every one of them gets the results, so every one
// of them must call it.
__device__ __forceinline__ void RowSum2(float& a, float& b) {
  for (int offset = 16; offset > 0; offset /= 2) {
    a += __shfl_xor_sync(0xffffffffu, a, offset);
    b += __shfl_xor_sync(0xffffffffu, b, offset);
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
      a += partial_a[warp];
      b += partial_b[warp];
    }
  }
}

// kVector 4: the caller checked that cols is a multiple of 4 and every pointer 16-byte aligned.
// direct: a single group, writing dweight itself.
template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    Rows(const float* __restrict__ x, const float* __restrict__ dy, const float* __restrict__ weight,
         float* __restrict__ dx, float* __restrict__ dweight, int64_t rows, int64_t cols, int64_t groups,
         bool direct) {
  const int t = threadIdx.x % kRowThreads;
  const int64_t group = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
  // Only warp groups can be idle (the last block's spare warps); they use no block barrier.
  if (group >= groups) return;
  float* pw = direct ? dweight : reinterpret_cast<float*>(g_partials) + group * cols;
  for (int64_t r = group; r < rows; r += groups) {
    const bool first = r == group;  // the group's first row starts its partial sums
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float squares = 0.0f;
    float sum_gx = 0.0f;
    if constexpr (kVector == 4) {
      const float4* x4 = reinterpret_cast<const float4*>(xr);
      const float4* dy4 = reinterpret_cast<const float4*>(dyr);
      const float4* w4 = reinterpret_cast<const float4*>(weight);
      const int64_t n4 = cols / 4;
      for (int64_t i = t; i < n4; i += kRowThreads) {
        const float4 v = x4[i];
        const float4 g = dy4[i];
        const float4 w = w4[i];
        squares += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
        sum_gx += ((g.x * w.x) * v.x + (g.y * w.y) * v.y) + ((g.z * w.z) * v.z + (g.w * w.w) * v.w);
      }
      RowSum2(squares, sum_gx);
      const float rstd = rsqrtf(squares / static_cast<float>(cols) + kEps);
      const float rstd3 = rstd * rstd * rstd;
      const float mean_gx = sum_gx / static_cast<float>(cols);
      float4* dx4 = reinterpret_cast<float4*>(dxr);
      float4* pw4 = reinterpret_cast<float4*>(pw);
      for (int64_t i = t; i < n4; i += kRowThreads) {
        const float4 v = x4[i];
        const float4 g = dy4[i];
        const float4 w = w4[i];
        dx4[i] = make_float4(rstd * (g.x * w.x) - rstd3 * v.x * mean_gx,
                             rstd * (g.y * w.y) - rstd3 * v.y * mean_gx,
                             rstd * (g.z * w.z) - rstd3 * v.z * mean_gx,
                             rstd * (g.w * w.w) - rstd3 * v.w * mean_gx);
        const float4 term = make_float4(g.x * (v.x * rstd), g.y * (v.y * rstd), g.z * (v.z * rstd),
                                        g.w * (v.w * rstd));
        if (first) {
          pw4[i] = term;
        } else {
          const float4 old = pw4[i];
          pw4[i] = make_float4(old.x + term.x, old.y + term.y, old.z + term.z, old.w + term.w);
        }
      }
    } else {
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const float v = xr[c];
        squares += v * v;
        sum_gx += (dyr[c] * weight[c]) * v;
      }
      RowSum2(squares, sum_gx);
      const float rstd = rsqrtf(squares / static_cast<float>(cols) + kEps);
      const float rstd3 = rstd * rstd * rstd;
      const float mean_gx = sum_gx / static_cast<float>(cols);
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const float v = xr[c];
        const float g = dyr[c];
        // cols = 1: the general formula cancels to its eps term; the closed form is the same value.
        dxr[c] = cols == 1 ? kEps * rstd3 * (g * weight[c]) : rstd * (g * weight[c]) - rstd3 * v * mean_gx;
        const float term = g * (v * rstd);
        pw[c] = first ? term : pw[c] + term;
      }
    }
  }
}

// dweight[c] = sum over groups of their partials, in a fixed order (lane l takes every 8th group
// from l, then the lanes are added 0..7).
__global__ void __launch_bounds__(kColumns * kLanes)
    Columns(float* __restrict__ dweight, int64_t cols, int64_t groups) {
  __shared__ float part[kLanes][kColumns + 1];
  const float* partials = reinterpret_cast<const float*>(g_partials);
  const int column = threadIdx.x % kColumns;
  const int lane = threadIdx.x / kColumns;
  const int64_t tiles = (cols + kColumns - 1) / kColumns;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t c = tile * kColumns + column;
    float sum = 0.0f;
    if (c < cols) {
      for (int64_t g = lane; g < groups; g += kLanes) sum += partials[g * cols + c];
    }
    part[lane][column] = sum;
    __syncthreads();
    if (lane == 0 && c < cols) {
      float total = part[0][column];
      for (int l = 1; l < kLanes; ++l) total += part[l][column];
      dweight[c] = total;
    }
    __syncthreads();  // the shared sums are rewritten only after lane 0 has read them
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void rmsnorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                 float* dweight, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // Every group gets at least one row; the buffer bounds how many can keep partials.
  int64_t groups = std::min<int64_t>({rows, int64_t{BLOCKS} * kRowsPerBlock, kPartialFloats / cols});
  const bool direct = groups <= 1;
  if (direct) groups = 1;
  const auto blocks = static_cast<unsigned>((groups + kRowsPerBlock - 1) / kRowsPerBlock);
  const bool vector = VECTOR == 4 && cols % 4 == 0 && Aligned(x) && Aligned(dy) && Aligned(weight) &&
                      Aligned(dx) && Aligned(dweight);
  if (vector) {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, Rows<4>)(x, dy, weight, dx, dweight, rows, cols, groups, direct);
  } else {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, Rows<1>)(x, dy, weight, dx, dweight, rows, cols, groups, direct);
  }
  if (!direct) {
    const int64_t tiles = (cols + kColumns - 1) / kColumns;
    const auto column_blocks = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 30));
    KSMITH_LAUNCH(column_blocks, kColumns * kLanes, 0, stream, Columns)(dweight, cols, groups);
  }
}
#endif  // KSMITH_HOST
