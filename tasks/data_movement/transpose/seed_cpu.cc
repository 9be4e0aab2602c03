// Tuner seed for transpose: square tiles, so that the rows read from x and the rows written to y
// both stay in the L1 cache while a tile is moved; tiles spread over OpenMP threads.
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune TILE: 16, 32, 64
#ifndef TILE
#define TILE 32
#endif

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t row_tiles = (rows + TILE - 1) / TILE;
  const int64_t col_tiles = (cols + TILE - 1) / TILE;
#pragma omp parallel for collapse(2) schedule(static) if (PARALLEL && row_tiles * col_tiles > 1)
  for (int64_t tr = 0; tr < row_tiles; ++tr) {
    for (int64_t tc = 0; tc < col_tiles; ++tc) {
      const int64_t r0 = tr * TILE;
      const int64_t c0 = tc * TILE;
      const int64_t r1 = r0 + TILE < rows ? r0 + TILE : rows;
      const int64_t c1 = c0 + TILE < cols ? c0 + TILE : cols;
      for (int64_t c = c0; c < c1; ++c) {
        float* yc = y + c * rows;
        for (int64_t r = r0; r < r1; ++r) yc[r] = x[r * cols + c];
      }
    }
  }
}
