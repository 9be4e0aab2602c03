// Tuner seed for attention_head on a GPU, fused in the flash-attention way, in full FP32 (FMA on
// CUDA cores; no TF32, no library): a block of 16 x 16 threads owns BLOCK_Q query rows and walks
// the keys BLOCK_K at a time. Per key tile it stages k in shared memory, computes the
// BLOCK_Q x BLOCK_K scores (each thread BLOCK_Q/16 x BLOCK_K/16 of them, rows ty + 16 i, columns
// tx + 16 j), and updates each row's running max and sum with an online softmax: the 16 threads
// of a row (lanes of one half-warp) combine their maxima and sums with shuffles, and the partial
// output is rescaled by exp(old max - new max). Then v's tile replaces k's, and each thread adds
// p v into its BLOCK_Q/16 x D/16 outputs held in registers, fetching the weights p of its rows
// from the other threads of its half-warp with shuffles. o = acc / sum at the end: the s x t
// scores never go to memory.
// The head dim is padded to D = 16, 32, 64 or 128 (the smallest >= d; zero columns add nothing);
// with D = 128 both tiles are capped at 32 rows, so that the static shared memory stays within
// 48 KiB. q is pre-scaled by log2(e) / sqrt(d) so that exp2f gives the weights. Keys past t score
// -inf; query rows past s are computed but not stored. A d above 128 takes a plain fallback
// kernel (a warp per query row, in passes of 128 columns), correct but not fast.
#include <cmath>
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune BLOCK_Q: 64, 32
#ifndef BLOCK_Q
#define BLOCK_Q 64
#endif

// @tune BLOCK_K: 64, 32
#ifndef BLOCK_K
#define BLOCK_K 64
#endif
namespace {

constexpr int kEdge = 16;                // threads along each side of the block
constexpr int kThreads = kEdge * kEdge;  // 256
static_assert(BLOCK_Q % kEdge == 0 && BLOCK_K % kEdge == 0, "tiles are multiples of 16");

// Rows of the q tile and of the k-or-v tile for head dim kDim: (rows + rows) * (kDim + 1) floats
// of static shared memory must stay within 48 KiB.
__host__ __device__ constexpr int QueryRows(int dim) { return dim > 64 && BLOCK_Q > 32 ? 32 : BLOCK_Q; }
__host__ __device__ constexpr int KeyRows(int dim) { return dim > 64 && BLOCK_K > 32 ? 32 : BLOCK_K; }

// Any d: a warp per query row, its lanes splitting the columns. A pass finds the row max; then,
// 128 columns of o at a time, a pass sums exp(a - max) and accumulates the weighted rows of v.
constexpr int kFallbackWarps = 8;
constexpr int kFallbackCols = 4;  // per lane and pass

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

// Stages rows [row0, row0 + tile_rows) of a [rows, d] matrix, scaled, into tile[r * (kDim + 1) + c];
// rows past `rows` and columns past d read zero.
template <int kDim>
__device__ __forceinline__ void StageTile(float* tile, const float* src, int64_t row0, int tile_rows,
                                          int64_t rows, int64_t d, float scale) {
  for (int e = threadIdx.x; e < tile_rows * kDim; e += kThreads) {
    const int r = e / kDim;
    const int c = e % kDim;
    const int64_t row = row0 + r;
    tile[r * (kDim + 1) + c] = row < rows && c < d ? src[row * d + c] * scale : 0.0f;
  }
}

template <int kDim>
__global__ void __launch_bounds__(kThreads)
    FlashAttention(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                   float* __restrict__ o, int64_t s, int64_t t, int64_t d, float q_scale) {
  constexpr int kBlockQ = QueryRows(kDim);
  constexpr int kBlockK = KeyRows(kDim);
  constexpr int kRowsPerThread = kBlockQ / kEdge;
  constexpr int kKeysPerThread = kBlockK / kEdge;
  constexpr int kColsPerThread = kDim / kEdge;
  constexpr int kStride = kDim + 1;  // an odd row stride: column reads across rows are conflict-free
  static_assert((kBlockQ + kBlockK) * kStride * sizeof(float) <= 48 * 1024, "static shared memory");
  __shared__ float qs[kBlockQ * kStride];
  __shared__ float kv[kBlockK * kStride];  // k's tile, then v's
  const int tx = threadIdx.x % kEdge;
  const int ty = threadIdx.x / kEdge;
  const int half_warp = threadIdx.x & 16;  // first lane of this thread's half-warp
  const int64_t q_tiles = (s + kBlockQ - 1) / kBlockQ;
  for (int64_t q_tile = blockIdx.x; q_tile < q_tiles; q_tile += gridDim.x) {
    const int64_t q0 = q_tile * kBlockQ;
    StageTile<kDim>(qs, q, q0, kBlockQ, s, d, q_scale);
    float acc[kRowsPerThread][kColsPerThread] = {};
    float run_max[kRowsPerThread];
    float run_sum[kRowsPerThread];
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      run_max[i] = -INFINITY;  // nothing seen yet; every tile holds key k0 < t
      run_sum[i] = 0.0f;
    }
    for (int64_t k0 = 0; k0 < t; k0 += kBlockK) {
      StageTile<kDim>(kv, k, k0, kBlockK, t, d, 1.0f);
      __syncthreads();  // q's and k's tiles are in place
      float score[kRowsPerThread][kKeysPerThread] = {};
#pragma unroll 8
      for (int c = 0; c < kDim; ++c) {
        float qv[kRowsPerThread];
        float kv_c[kKeysPerThread];
#pragma unroll
        for (int i = 0; i < kRowsPerThread; ++i) qv[i] = qs[(ty + kEdge * i) * kStride + c];
#pragma unroll
        for (int j = 0; j < kKeysPerThread; ++j) kv_c[j] = kv[(tx + kEdge * j) * kStride + c];
#pragma unroll
        for (int i = 0; i < kRowsPerThread; ++i) {
#pragma unroll
          for (int j = 0; j < kKeysPerThread; ++j) score[i][j] = fmaf(qv[i], kv_c[j], score[i][j]);
        }
      }
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int j = 0; j < kKeysPerThread; ++j) {
          if (k0 + tx + kEdge * j >= t) score[i][j] = -INFINITY;
          tile_max = fmaxf(tile_max, score[i][j]);
        }
        // The 16 threads of row group ty: xor offsets below 16 stay inside the half-warp.
        for (int offset = kEdge / 2; offset > 0; offset /= 2) {
          tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, offset));
        }
        const float new_max = fmaxf(run_max[i], tile_max);  // finite: key k0 is in the tile
        float part = 0.0f;
#pragma unroll
        for (int j = 0; j < kKeysPerThread; ++j) {
          score[i][j] = exp2f(score[i][j] - new_max);  // the weight; exp2f(-inf) = 0 past t
          part += score[i][j];
        }
        for (int offset = kEdge / 2; offset > 0; offset /= 2) {
          part += __shfl_xor_sync(0xffffffffu, part, offset);
        }
        const float rescale = exp2f(run_max[i] - new_max);  // 0 at the first tile
        run_sum[i] = run_sum[i] * rescale + part;
        run_max[i] = new_max;
#pragma unroll
        for (int c = 0; c < kColsPerThread; ++c) acc[i][c] *= rescale;
      }
      __syncthreads();  // every thread is done with k's tile
      StageTile<kDim>(kv, v, k0, kBlockK, t, d, 1.0f);
      __syncthreads();  // v's tile is in place
      // Key j = src + 16 jj of the tile: its weights for this thread's rows sit in lane src of
      // this half-warp (thread tx = src of the same row group), in score[i][jj].
#pragma unroll
      for (int jj = 0; jj < kKeysPerThread; ++jj) {
#pragma unroll 4
        for (int src = 0; src < kEdge; ++src) {
          const int j = src + kEdge * jj;
          float pv[kRowsPerThread];
          float vv[kColsPerThread];
#pragma unroll
          for (int i = 0; i < kRowsPerThread; ++i) pv[i] = __shfl_sync(0xffffffffu, score[i][jj], half_warp | src);
#pragma unroll
          for (int c = 0; c < kColsPerThread; ++c) vv[c] = kv[j * kStride + tx + kEdge * c];
#pragma unroll
          for (int i = 0; i < kRowsPerThread; ++i) {
#pragma unroll
            for (int c = 0; c < kColsPerThread; ++c) acc[i][c] = fmaf(pv[i], vv[c], acc[i][c]);
          }
        }
      }
      __syncthreads();  // v's tile is rewritten only after every thread is done
    }
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int64_t row = q0 + ty + kEdge * i;
      if (row >= s) continue;
      const float inv = 1.0f / run_sum[i];
#pragma unroll
      for (int c = 0; c < kColsPerThread; ++c) {
        const int64_t col = tx + kEdge * c;
        if (col < d) o[row * d + col] = acc[i][c] * inv;
      }
    }
  }
}

__device__ __forceinline__ float WarpScore(const float* qi, const float* kj, int64_t d, float scale, int lane) {
  float dot = 0.0f;
  for (int64_t c = lane; c < d; c += 32) dot = fmaf(qi[c], kj[c], dot);
  for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
  return dot * scale;
}

__global__ void __launch_bounds__(32 * kFallbackWarps)
    AttentionFallback(const float* q, const float* k, const float* v, float* o, int64_t s, int64_t t,
                      int64_t d, float scale) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kFallbackWarps;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kFallbackWarps + threadIdx.x / 32; i < s; i += warps) {
    const float* qi = q + i * d;
    float mx = -INFINITY;
    for (int64_t j = 0; j < t; ++j) mx = fmaxf(mx, WarpScore(qi, k + j * d, d, scale, lane));
    for (int64_t c0 = 0; c0 < d; c0 += 32 * kFallbackCols) {
      float acc[kFallbackCols] = {};
      float sum = 0.0f;
      for (int64_t j = 0; j < t; ++j) {
        const float e = expf(WarpScore(qi, k + j * d, d, scale, lane) - mx);
        sum += e;
#pragma unroll
        for (int r = 0; r < kFallbackCols; ++r) {
          const int64_t c = c0 + lane + 32 * r;
          if (c < d) acc[r] = fmaf(e, v[j * d + c], acc[r]);
        }
      }
#pragma unroll
      for (int r = 0; r < kFallbackCols; ++r) {
        const int64_t c = c0 + lane + 32 * r;
        if (c < d) o[i * d + c] = acc[r] / sum;
      }
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

template <int kDim>
void LaunchFlash(const float* q, const float* k, const float* v, float* o, int64_t s, int64_t t, int64_t d,
                 cudaStream_t stream) {
  const float q_scale = 1.4426950408889634f / std::sqrt(static_cast<float>(d));  // log2(e) / sqrt(d)
  const int64_t q_tiles = (s + QueryRows(kDim) - 1) / QueryRows(kDim);
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(q_tiles, int64_t{1} << 30));
  // NVRTC compiles the kernels that launches name as written: one launch per instantiation.
  if constexpr (kDim == 16) KSMITH_LAUNCH(blocks, kThreads, 0, stream, FlashAttention<16>)(q, k, v, o, s, t, d, q_scale);
  if constexpr (kDim == 32) KSMITH_LAUNCH(blocks, kThreads, 0, stream, FlashAttention<32>)(q, k, v, o, s, t, d, q_scale);
  if constexpr (kDim == 64) KSMITH_LAUNCH(blocks, kThreads, 0, stream, FlashAttention<64>)(q, k, v, o, s, t, d, q_scale);
  if constexpr (kDim == 128) KSMITH_LAUNCH(blocks, kThreads, 0, stream, FlashAttention<128>)(q, k, v, o, s, t, d, q_scale);
}

}  // namespace

extern "C" void attention_head(const float* q, const float* k, const float* v, float* o, int64_t s,
                               int64_t t, int64_t d, cudaStream_t stream) {
  if (s <= 0 || t <= 0 || d <= 0) return;
  if (d <= 16) {
    LaunchFlash<16>(q, k, v, o, s, t, d, stream);
  } else if (d <= 32) {
    LaunchFlash<32>(q, k, v, o, s, t, d, stream);
  } else if (d <= 64) {
    LaunchFlash<64>(q, k, v, o, s, t, d, stream);
  } else if (d <= 128) {
    LaunchFlash<128>(q, k, v, o, s, t, d, stream);
  } else {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    const int64_t blocks = std::min<int64_t>((s + kFallbackWarps - 1) / kFallbackWarps, int64_t{1} << 30);
    KSMITH_LAUNCH(static_cast<unsigned>(blocks), 32 * kFallbackWarps, 0, stream, AttentionFallback)(q, k, v, o, s, t, d,
                                                                                       scale);
  }
}
#endif  // KSMITH_HOST
