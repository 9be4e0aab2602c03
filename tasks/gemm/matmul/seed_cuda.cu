// Tuner seed for matmul on a GPU, in full FP32 (FMA on CUDA cores; no TF32, no library): a block
// computes a BLOCK_TILE x BLOCK_TILE tile of c, stepping through k K_STEP columns at a time staged
// in shared memory; each thread keeps THREAD_TILE x THREAD_TILE outputs in registers. Threads own
// strided rows and columns (ty + EDGE i, tx + EDGE j), so that shared-memory reads are broadcasts
// or conflict-free. Loads outside the matrices read zero and stores outside are skipped, so every
// shape is handled.
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

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

__global__ void __launch_bounds__(kThreads)
    Sgemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
          int64_t m, int64_t n, int64_t k) {
  __shared__ float as[kStep][kTile + 4];  // as[p][i] = a[row0 + i, k0 + p], padded: no conflicts
  __shared__ float bs[kStep][kTile];      // bs[p][j] = b[k0 + p, col0 + j]
  const int tx = threadIdx.x % kEdge;
  const int ty = threadIdx.x / kEdge;
  const int64_t row_tiles = (m + kTile - 1) / kTile;
  const int64_t col_tiles = (n + kTile - 1) / kTile;
  for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    for (int64_t tile_col = blockIdx.x; tile_col < col_tiles; tile_col += gridDim.x) {
      const int64_t row0 = tile_row * kTile;
      const int64_t col0 = tile_col * kTile;
      float acc[kThreadTile][kThreadTile] = {};
      for (int64_t k0 = 0; k0 < k; k0 += kStep) {
        for (int e = threadIdx.x; e < kTile * kStep; e += kThreads) {
          const int i = e / kStep;
          const int p = e % kStep;
          const int64_t row = row0 + i;
          const int64_t depth = k0 + p;
          as[p][i] = row < m && depth < k ? a[row * k + depth] : 0.0f;
        }
        for (int e = threadIdx.x; e < kStep * kTile; e += kThreads) {
          const int p = e / kTile;
          const int j = e % kTile;
          const int64_t depth = k0 + p;
          const int64_t col = col0 + j;
          bs[p][j] = depth < k && col < n ? b[depth * n + col] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kStep; ++p) {
          float av[kThreadTile];
          float bv[kThreadTile];
#pragma unroll
          for (int i = 0; i < kThreadTile; ++i) av[i] = as[p][ty + kEdge * i];
#pragma unroll
          for (int j = 0; j < kThreadTile; ++j) bv[j] = bs[p][tx + kEdge * j];
#pragma unroll
          for (int i = 0; i < kThreadTile; ++i) {
#pragma unroll
            for (int j = 0; j < kThreadTile; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
          }
        }
        __syncthreads();  // the stage is refilled only after every thread has read it
      }
#pragma unroll
      for (int i = 0; i < kThreadTile; ++i) {
        const int64_t row = row0 + ty + kEdge * i;
        if (row >= m) continue;
#pragma unroll
        for (int j = 0; j < kThreadTile; ++j) {
          const int64_t col = col0 + tx + kEdge * j;
          if (col < n) c[row * n + col] = acc[i][j];
        }
      }
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const int64_t row_tiles = (m + kTile - 1) / kTile;
  const int64_t col_tiles = (n + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  KSMITH_LAUNCH(grid, kThreads, 0, stream, Sgemm)(a, b, c, m, n, k);
}
#endif  // KSMITH_HOST
