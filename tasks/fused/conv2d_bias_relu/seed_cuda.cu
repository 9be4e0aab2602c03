// Tuner seed for conv2d_bias_relu on a GPU, fused, as an implicit GEMM in full FP32 (FMA on CUDA
// cores; no TF32, no library): rows are output channels (the weights [cout, cin*kh*kw] are the
// left matrix as they lie), columns are output positions (image, oy, ox), depth is (ci, ky, kx).
// A block computes a BLOCK_TILE x BLOCK_TILE tile, stepping through the depth K_STEP at a time
// staged in shared memory; the column tile is gathered straight from x (consecutive threads read
// consecutive ox, so the gathers coalesce along image rows), so no im2col buffer exists. Each
// thread keeps THREAD_TILE x THREAD_TILE sums in registers and, once the depth is done, adds the
// bias and applies the ReLU before its one store. A thread's gather column is the same at every
// step, so its (image, oy, ox) offset is computed once per tile; the depth index is split into
// (ci, ky, kx) with 32-bit division (cin*kh*kw, the length of a weight row, is far below 2^31).
// Loads outside the operands read zero and stores outside are skipped, so every shape is handled.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune BLOCK_TILE: 64, 128
#ifndef BLOCK_TILE
#define BLOCK_TILE 128
#endif

// @tune THREAD_TILE: 4, 8
#ifndef THREAD_TILE
#define THREAD_TILE 8
#endif

// @tune K_STEP: 8, 16
#ifndef K_STEP
#define K_STEP 8
#endif
namespace {

constexpr int kTile = BLOCK_TILE;
constexpr int kThreadTile = THREAD_TILE;
constexpr int kStep = K_STEP;
constexpr int kEdge = kTile / kThreadTile;  // threads along each side of the tile
constexpr int kThreads = kEdge * kEdge;     // 64 to 1024 over the knobs' values
static_assert(kThreads <= 1024, "a block holds at most 1024 threads");
// Every thread gathers the same column of the tile at every step (see below).
static_assert(kThreads % kTile == 0, "the block's threads cover whole rows of the column stage");

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

__global__ void __launch_bounds__(kThreads)
    Conv2dBiasRelu(const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ b,
                   float* __restrict__ y, int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout,
                   int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  __shared__ float ws[kStep][kTile + 4];  // ws[p][i] = wt[row0 + i, k0 + p], padded: no conflicts
  __shared__ float xs[kStep][kTile];      // xs[p][j] = x at (column col0 + j, depth k0 + p)
  const int64_t depth_total = cin * kh * kw;
  const int64_t pixels = oh * ow;
  const int64_t columns = n * pixels;
  const int64_t plane = h * w;
  const unsigned window = static_cast<unsigned>(kh * kw);
  const unsigned kw32 = static_cast<unsigned>(kw);
  const int tx = threadIdx.x % kEdge;
  const int ty = threadIdx.x / kEdge;
  // This thread's gather column within the tile, and the first of its depth rows.
  const int gather_j = threadIdx.x % kTile;
  const int gather_p0 = threadIdx.x / kTile;
  constexpr int kGatherRows = kThreads / kTile;
  const int64_t row_tiles = (cout + kTile - 1) / kTile;
  const int64_t col_tiles = (columns + kTile - 1) / kTile;
  for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    for (int64_t tile_col = blockIdx.x; tile_col < col_tiles; tile_col += gridDim.x) {
      const int64_t row0 = tile_row * kTile;
      const int64_t col0 = tile_col * kTile;
      const int64_t gather_col = col0 + gather_j;
      const bool gather_valid = gather_col < columns;
      int64_t gather_base = 0;  // x offset of (image, 0, oy, ox) for this thread's column
      if (gather_valid) {
        const int64_t nb = gather_col / pixels;
        const int64_t pixel = gather_col % pixels;
        gather_base = nb * cin * plane + (pixel / ow) * w + pixel % ow;
      }
      float acc[kThreadTile][kThreadTile] = {};
      for (int64_t k0 = 0; k0 < depth_total; k0 += kStep) {
        for (int e = threadIdx.x; e < kTile * kStep; e += kThreads) {
          const int i = e / kStep;
          const int p = e % kStep;
          const int64_t row = row0 + i;
          const int64_t depth = k0 + p;
          ws[p][i] = row < cout && depth < depth_total ? wt[row * depth_total + depth] : 0.0f;
        }
        for (int p = gather_p0; p < kStep; p += kGatherRows) {
          const int64_t depth = k0 + p;
          float value = 0.0f;
          if (gather_valid && depth < depth_total) {
            const unsigned d32 = static_cast<unsigned>(depth);
            const unsigned ci = d32 / window;
            const unsigned r = d32 - ci * window;
            const unsigned ky = r / kw32;
            const unsigned kx = r - ky * kw32;
            value = x[gather_base + static_cast<int64_t>(ci) * plane + static_cast<int64_t>(ky) * w + kx];
          }
          xs[p][gather_j] = value;
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kStep; ++p) {
          float wv[kThreadTile];
          float xv[kThreadTile];
#pragma unroll
          for (int i = 0; i < kThreadTile; ++i) wv[i] = ws[p][ty + kEdge * i];
#pragma unroll
          for (int j = 0; j < kThreadTile; ++j) xv[j] = xs[p][tx + kEdge * j];
#pragma unroll
          for (int i = 0; i < kThreadTile; ++i) {
#pragma unroll
            for (int j = 0; j < kThreadTile; ++j) acc[i][j] = fmaf(wv[i], xv[j], acc[i][j]);
          }
        }
        __syncthreads();  // the stage is refilled only after every thread has read it
      }
#pragma unroll
      for (int j = 0; j < kThreadTile; ++j) {
        const int64_t col = col0 + tx + kEdge * j;
        if (col >= columns) continue;
        const int64_t nb = col / pixels;
        const int64_t pixel = col % pixels;
#pragma unroll
        for (int i = 0; i < kThreadTile; ++i) {
          const int64_t co = row0 + ty + kEdge * i;
          if (co >= cout) continue;
          const float z = acc[i][j] + b[co];
          y[(nb * cout + co) * pixels + pixel] = z > 0.0f ? z : 0.0f;
        }
      }
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

extern "C" void conv2d_bias_relu(const float* x, const float* wt, const float* b, float* y, int64_t n,
                                 int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw,
                                 int64_t oh, int64_t ow, cudaStream_t stream) {
  if (n <= 0 || cout <= 0 || oh <= 0 || ow <= 0) return;
  const int64_t row_tiles = (cout + kTile - 1) / kTile;
  const int64_t col_tiles = (n * oh * ow + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  KSMITH_LAUNCH(grid, kThreads, 0, stream, Conv2dBiasRelu)(x, wt, b, y, n, cin, h, w, cout, kh, kw, oh, ow);
}
#endif  // KSMITH_HOST
