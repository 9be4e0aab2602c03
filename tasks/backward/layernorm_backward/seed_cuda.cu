// Tuner seed for layernorm_backward on a GPU. A row belongs to a group of ROW_THREADS threads (a
// warp for short rows, or a whole block); a bounded number of groups (BLOCKS blocks, fewer when
// the partial buffer below cannot hold them) walk the rows in a grid-stride loop. Per row: two-pass
// mean and variance, the row sums of g = dy * weight and g * xhat, then dx; and the row's dy * xhat
// and dy added into the group's own partial dweight and dbias, a slice of a static device buffer
// that only this group's threads touch, each column always by the same thread (no atomics, no
// race). A second small kernel adds the groups' partials in group order: the result is
// deterministic. When a single group is left (one row, or rows too long for the buffer), it
// writes dweight and dbias directly and the second kernel is skipped. VECTOR 4 moves float4s when
// cols is a multiple of 4 and every pointer 16-byte aligned.
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
constexpr float kEps = 1e-5f;

// Partial column sums, group g at [g * 2 * cols, (g + 1) * 2 * cols): its dweight then its dbias.
// 16 MiB: small enough to stay in L2 while the groups update it. float4 for 16-byte alignment.
// Calls on one stream run one after another, so one buffer serves every call.
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

__device__ __forceinline__ float RowSum(float a) {
  float unused = 0.0f;
  RowSum2(a, unused);
  return a;
}

// out = first ? v : out + v, for the partial sums (the group's first row starts them).
__device__ __forceinline__ void Accumulate(float& out, float v, bool first) { out = first ? v : out + v; }

// kVector 4: the caller checked that cols is a multiple of 4 and every pointer 16-byte aligned.
// direct: a single group, writing dweight and dbias itself.
template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    Rows(const float* __restrict__ x, const float* __restrict__ dy, const float* __restrict__ weight,
         float* __restrict__ dx, float* __restrict__ dweight, float* __restrict__ dbias, int64_t rows,
         int64_t cols, int64_t groups, bool direct) {
  const int t = threadIdx.x % kRowThreads;
  const int64_t group = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
  // Only warp groups can be idle (the last block's spare warps); they use no block barrier.
  if (group >= groups) return;
  float* partials = reinterpret_cast<float*>(g_partials);
  float* pw = direct ? dweight : partials + group * 2 * cols;
  float* pb = direct ? dbias : partials + group * 2 * cols + cols;
  for (int64_t r = group; r < rows; r += groups) {
    const bool first = r == group;
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    if (cols == 2) {
      // The general dx formula cancels to its eps term: the closed form is the same value.
      // And xhat = +-half_delta * rstd exactly (x - mean would carry mean's rounding error, large
      // next to a small half_delta).
      if (t == 0) {
        const float half_delta = (xr[0] - xr[1]) * 0.5f;
        const float rstd = rsqrtf(half_delta * half_delta + kEps);
        const float xhat0 = half_delta * rstd;
        const float dx0 = kEps * rstd * rstd * rstd * (dyr[0] * weight[0] - dyr[1] * weight[1]) * 0.5f;
        dxr[0] = dx0;
        dxr[1] = -dx0;
        Accumulate(pw[0], dyr[0] * xhat0, first);
        Accumulate(pw[1], dyr[1] * -xhat0, first);
        Accumulate(pb[0], dyr[0], first);
        Accumulate(pb[1], dyr[1], first);
      }
      continue;
    }
    float mean;
    float rstd;
    float mean_g;
    float mean_gx;
    if constexpr (kVector == 4) {
      const float4* x4 = reinterpret_cast<const float4*>(xr);
      const float4* dy4 = reinterpret_cast<const float4*>(dyr);
      const float4* w4 = reinterpret_cast<const float4*>(weight);
      const int64_t n4 = cols / 4;
      float sum = 0.0f;
      for (int64_t i = t; i < n4; i += kRowThreads) {
        const float4 v = x4[i];
        sum += (v.x + v.y) + (v.z + v.w);
      }
      mean = RowSum(sum) / static_cast<float>(cols);
      float squares = 0.0f;
      for (int64_t i = t; i < n4; i += kRowThreads) {
        const float4 v = x4[i];
        const float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
        squares += (a * a + b * b) + (c * c + d * d);
      }
      rstd = rsqrtf(RowSum(squares) / static_cast<float>(cols) + kEps);
      float sum_g = 0.0f;
      float sum_gx = 0.0f;
      for (int64_t i = t; i < n4; i += kRowThreads) {
        const float4 v = x4[i];
        const float4 g = dy4[i];
        const float4 w = w4[i];
        const float g0 = g.x * w.x, g1 = g.y * w.y, g2 = g.z * w.z, g3 = g.w * w.w;
        sum_g += (g0 + g1) + (g2 + g3);
        sum_gx += (g0 * ((v.x - mean) * rstd) + g1 * ((v.y - mean) * rstd)) +
                  (g2 * ((v.z - mean) * rstd) + g3 * ((v.w - mean) * rstd));
      }
      RowSum2(sum_g, sum_gx);
      mean_g = sum_g / static_cast<float>(cols);
      mean_gx = sum_gx / static_cast<float>(cols);
      float4* dx4 = reinterpret_cast<float4*>(dxr);
      float4* pw4 = reinterpret_cast<float4*>(pw);
      float4* pb4 = reinterpret_cast<float4*>(pb);
      for (int64_t i = t; i < n4; i += kRowThreads) {
        const float4 v = x4[i];
        const float4 g = dy4[i];
        const float4 w = w4[i];
        const float h0 = (v.x - mean) * rstd, h1 = (v.y - mean) * rstd;
        const float h2 = (v.z - mean) * rstd, h3 = (v.w - mean) * rstd;
        dx4[i] = make_float4(rstd * (g.x * w.x - mean_g - h0 * mean_gx),
                             rstd * (g.y * w.y - mean_g - h1 * mean_gx),
                             rstd * (g.z * w.z - mean_g - h2 * mean_gx),
                             rstd * (g.w * w.w - mean_g - h3 * mean_gx));
        const float4 gw = make_float4(g.x * h0, g.y * h1, g.z * h2, g.w * h3);
        if (first) {
          pw4[i] = gw;
          pb4[i] = g;
        } else {
          const float4 ow = pw4[i];
          const float4 ob = pb4[i];
          pw4[i] = make_float4(ow.x + gw.x, ow.y + gw.y, ow.z + gw.z, ow.w + gw.w);
          pb4[i] = make_float4(ob.x + g.x, ob.y + g.y, ob.z + g.z, ob.w + g.w);
        }
      }
    } else {
      float sum = 0.0f;
      for (int64_t c = t; c < cols; c += kRowThreads) sum += xr[c];
      mean = RowSum(sum) / static_cast<float>(cols);
      float squares = 0.0f;
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const float d = xr[c] - mean;
        squares += d * d;
      }
      rstd = rsqrtf(RowSum(squares) / static_cast<float>(cols) + kEps);
      float sum_g = 0.0f;
      float sum_gx = 0.0f;
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const float g = dyr[c] * weight[c];
        sum_g += g;
        sum_gx += g * ((xr[c] - mean) * rstd);
      }
      RowSum2(sum_g, sum_gx);
      mean_g = sum_g / static_cast<float>(cols);
      mean_gx = sum_gx / static_cast<float>(cols);
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const float g = dyr[c];
        const float xhat = (xr[c] - mean) * rstd;
        // cols = 1: dx is exactly 0 (g - mean(g) with a contracted product would not cancel).
        dxr[c] = cols == 1 ? 0.0f : rstd * (g * weight[c] - mean_g - xhat * mean_gx);
        Accumulate(pw[c], g * xhat, first);
        Accumulate(pb[c], g, first);
      }
    }
  }
}

// dweight[c] = sum over groups of their partials, in a fixed order (lane l takes every 8th group
// from l, then the lanes are added 0..7).
__global__ void __launch_bounds__(kColumns * kLanes)
    Columns(float* __restrict__ dweight, float* __restrict__ dbias, int64_t cols, int64_t groups) {
  __shared__ float part_w[kLanes][kColumns + 1];
  __shared__ float part_b[kLanes][kColumns + 1];
  const float* partials = reinterpret_cast<const float*>(g_partials);
  const int column = threadIdx.x % kColumns;
  const int lane = threadIdx.x / kColumns;
  const int64_t tiles = (cols + kColumns - 1) / kColumns;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t c = tile * kColumns + column;
    float sum_w = 0.0f;
    float sum_b = 0.0f;
    if (c < cols) {
      for (int64_t g = lane; g < groups; g += kLanes) {
        sum_w += partials[g * 2 * cols + c];
        sum_b += partials[g * 2 * cols + cols + c];
      }
    }
    part_w[lane][column] = sum_w;
    part_b[lane][column] = sum_b;
    __syncthreads();
    if (lane == 0 && c < cols) {
      float total_w = part_w[0][column];
      float total_b = part_b[0][column];
      for (int l = 1; l < kLanes; ++l) {
        total_w += part_w[l][column];
        total_b += part_b[l][column];
      }
      dweight[c] = total_w;
      dbias[c] = total_b;
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

extern "C" void layernorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                   float* dweight, float* dbias, int64_t rows, int64_t cols,
                                   cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // Every group gets at least one row; the buffer bounds how many can keep partials.
  int64_t groups = std::min<int64_t>({rows, int64_t{BLOCKS} * kRowsPerBlock, kPartialFloats / (2 * cols)});
  const bool direct = groups <= 1;
  if (direct) groups = 1;
  const auto blocks = static_cast<unsigned>((groups + kRowsPerBlock - 1) / kRowsPerBlock);
  const bool vector = VECTOR == 4 && cols % 4 == 0 && Aligned(x) && Aligned(dy) && Aligned(weight) &&
                      Aligned(dx) && Aligned(dweight) && Aligned(dbias);
  if (vector) {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, Rows<4>)(x, dy, weight, dx, dweight, dbias, rows, cols, groups,
                                                  direct);
  } else {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, Rows<1>)(x, dy, weight, dx, dweight, dbias, rows, cols, groups,
                                                  direct);
  }
  if (!direct) {
    const int64_t tiles = (cols + kColumns - 1) / kColumns;
    const auto column_blocks = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 30));
    KSMITH_LAUNCH(column_blocks, kColumns * kLanes, 0, stream, Columns)(dweight, dbias, cols, groups);
  }
}
#endif  // KSMITH_HOST
