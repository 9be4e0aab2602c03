// Tuner seed for transpose on a GPU: a block moves TILE x TILE tiles through shared memory, reading
// rows of x and writing rows of y so that both sides are coalesced; the extra column of padding
// keeps the column reads of the tile free of bank conflicts. The block is TILE x ROWS_PER_PASS
// threads, each moving TILE / ROWS_PER_PASS elements per tile. Tiles are looped over, so no grid
// dimension can overflow, and every element is bounds-checked, so every shape is handled.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune TILE: 16, 32, 64
#ifndef TILE
#define TILE 32
#endif

// @tune ROWS_PER_PASS: 4, 8
#ifndef ROWS_PER_PASS
#define ROWS_PER_PASS 8
#endif

#ifdef KSMITH_DEVICE
namespace {

__global__ void __launch_bounds__(TILE * ROWS_PER_PASS)
    Transpose(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols) {
  __shared__ float tile[TILE][TILE + 1];
  const int64_t row_tiles = (rows + TILE - 1) / TILE;
  const int64_t col_tiles = (cols + TILE - 1) / TILE;
  for (int64_t tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
    for (int64_t tc = blockIdx.x; tc < col_tiles; tc += gridDim.x) {
      const int64_t r0 = tr * TILE;
      const int64_t c0 = tc * TILE;
      for (int i = threadIdx.y; i < TILE; i += ROWS_PER_PASS) {
        const int64_t r = r0 + i;
        const int64_t c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = x[r * cols + c];
      }
      __syncthreads();
      for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
        const int64_t c = c0 + j;            // the row of y
        const int64_t r = r0 + threadIdx.x;  // the column of y
        if (c < cols && r < rows) y[c * rows + r] = tile[threadIdx.x][j];
      }
      __syncthreads();  // the tile is refilled only after every thread has read it
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int64_t row_tiles = (rows + TILE - 1) / TILE;
  const int64_t col_tiles = (cols + TILE - 1) / TILE;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  KSMITH_LAUNCH(grid, dim3(TILE, ROWS_PER_PASS), 0, stream, Transpose)(x, y, rows, cols);
}
#endif  // KSMITH_HOST
