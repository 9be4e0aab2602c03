// Tuner seed for gemm_logsumexp on a GPU, fused, in full FP32 (FMA on CUDA cores; no TF32,
// no library): a block of 16 x 16 threads owns ROW_TILE rows of x and walks all of z's columns,
// COL_TILE at a time. For each tile of z it steps through k K_STEP columns at a time staged in
// shared memory (x [m, k] and w [n, k] are both read along k and staged the same way, rows of
// the tile in padded shared-memory columns), each thread keeping ROW_TILE/16 x COL_TILE/16 sums
// in registers; then b is added, the 16 threads of a row find the tile's row max with warp
// shuffles, and the row's running (max, sum of exp(z - max)) takes the tile in: the running sum is
// rescaled by exp(old max - new max), then the threads' sums of exp(z - new max) are added.
// y = max + log(sum). z never goes to memory, and y needs no atomics: a row belongs to one block.
// Loads outside the matrices read zero and columns past n are left out of the max and the sums,
// so every shape is handled.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune ROW_TILE: 64, 32
#ifndef ROW_TILE
#define ROW_TILE 64
#endif

// @tune COL_TILE: 128, 64
#ifndef COL_TILE
#define COL_TILE 128
#endif

// @tune K_STEP: 8, 16
#ifndef K_STEP
#define K_STEP 8
#endif
namespace {

constexpr int kEdge = 16;                 // threads along each side of the block
constexpr int kThreads = kEdge * kEdge;   // 256
constexpr int kRowTile = ROW_TILE;
constexpr int kColTile = COL_TILE;
constexpr int kStep = K_STEP;
constexpr int kRowsPerThread = kRowTile / kEdge;
constexpr int kColsPerThread = kColTile / kEdge;
static_assert(kRowTile % kEdge == 0 && kColTile % kEdge == 0, "tiles are multiples of 16");

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

__global__ void __launch_bounds__(kThreads)
    GemmLogsumexp(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                  float* __restrict__ y, int64_t m, int64_t n, int64_t k) {
  __shared__ float xs[kStep][kRowTile + 4];  // xs[p][i] = x[row0 + i, k0 + p], padded: no conflicts
  __shared__ float ws[kStep][kColTile + 4];  // ws[p][j] = w[col0 + j, k0 + p]
  const int tx = threadIdx.x % kEdge;  // the 16 threads of a row group are lanes of one half-warp
  const int ty = threadIdx.x / kEdge;
  const int64_t row_tiles = (m + kRowTile - 1) / kRowTile;
  for (int64_t tile_row = blockIdx.x; tile_row < row_tiles; tile_row += gridDim.x) {
    const int64_t row0 = tile_row * kRowTile;
    float run_max[kRowsPerThread];
    float run_sum[kRowsPerThread];
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      run_max[i] = -INFINITY;  // nothing seen yet; every tile holds column col0 < n of each row
      run_sum[i] = 0.0f;
    }
    for (int64_t col0 = 0; col0 < n; col0 += kColTile) {
      float acc[kRowsPerThread][kColsPerThread] = {};
      for (int64_t k0 = 0; k0 < k; k0 += kStep) {
        for (int e = threadIdx.x; e < kRowTile * kStep; e += kThreads) {
          const int i = e / kStep;
          const int p = e % kStep;
          const int64_t row = row0 + i;
          const int64_t depth = k0 + p;
          xs[p][i] = row < m && depth < k ? x[row * k + depth] : 0.0f;
        }
        for (int e = threadIdx.x; e < kColTile * kStep; e += kThreads) {
          const int j = e / kStep;
          const int p = e % kStep;
          const int64_t col = col0 + j;
          const int64_t depth = k0 + p;
          ws[p][j] = col < n && depth < k ? w[col * k + depth] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kStep; ++p) {
          float xv[kRowsPerThread];
          float wv[kColsPerThread];
#pragma unroll
          for (int i = 0; i < kRowsPerThread; ++i) xv[i] = xs[p][ty + kEdge * i];
#pragma unroll
          for (int j = 0; j < kColsPerThread; ++j) wv[j] = ws[p][tx + kEdge * j];
#pragma unroll
          for (int i = 0; i < kRowsPerThread; ++i) {
#pragma unroll
            for (int j = 0; j < kColsPerThread; ++j) acc[i][j] = fmaf(xv[i], wv[j], acc[i][j]);
          }
        }
        __syncthreads();  // the stage is refilled only after every thread has read it
      }
      float bias[kColsPerThread];
#pragma unroll
      for (int j = 0; j < kColsPerThread; ++j) {
        const int64_t col = col0 + tx + kEdge * j;
        bias[j] = col < n ? b[col] : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int j = 0; j < kColsPerThread; ++j) {
          acc[i][j] += bias[j];
          if (col0 + tx + kEdge * j < n) tile_max = fmaxf(tile_max, acc[i][j]);
        }
        // The 16 threads of row group ty: xor offsets below 16 stay inside the half-warp.
        for (int offset = kEdge / 2; offset > 0; offset /= 2) {
          tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, offset));
        }
        const float new_max = fmaxf(run_max[i], tile_max);  // finite: column col0 is in the tile
        float part = 0.0f;
#pragma unroll
        for (int j = 0; j < kColsPerThread; ++j) {
          if (col0 + tx + kEdge * j < n) part += expf(acc[i][j] - new_max);
        }
        for (int offset = kEdge / 2; offset > 0; offset /= 2) {
          part += __shfl_xor_sync(0xffffffffu, part, offset);
        }
        run_sum[i] = run_sum[i] * expf(run_max[i] - new_max) + part;  // expf(-inf) = 0 at first
        run_max[i] = new_max;
      }
    }
    if (tx == 0) {
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        const int64_t row = row0 + ty + kEdge * i;
        if (row < m) y[row] = run_max[i] + logf(run_sum[i]);
      }
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

extern "C" void gemm_logsumexp(const float* x, const float* w, const float* b, float* y, int64_t m,
                               int64_t n, int64_t k, cudaStream_t stream) {
  if (m <= 0) return;
  const int64_t row_tiles = (m + kRowTile - 1) / kRowTile;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(row_tiles, int64_t{1} << 30));
  KSMITH_LAUNCH(blocks, kThreads, 0, stream, GemmLogsumexp)(x, w, b, y, m, n, k);
}
#endif  // KSMITH_HOST
