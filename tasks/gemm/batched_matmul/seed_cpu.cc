// Tuner seed for batched_matmul: every c[s] is cut into tiles of 64 rows x TILE_N columns, and
// the tiles of all batch entries are handed to OpenMP threads together (many small matrices
// still fill every core); each tile accumulates TILE_K-deep slices of a[s] and b[s], so that the
// slice of b[s] it reuses stays in cache.
// Inside a tile, 4 x BLOCK_COLS blocks of c are held in registers across a whole slice (one
// multiply-add of a row of b per row of a); edges that do not fill a block take plain loops.
// BLOCK_COLS 32 keeps 8 independent accumulator vectors busy with AVX-512 but spills with AVX2.
#include <cstdint>

// @tune TILE_N: 128, 512
#ifndef TILE_N
#define TILE_N 512
#endif

// @tune TILE_K: 128, 512
#ifndef TILE_K
#define TILE_K 128
#endif

// @tune BLOCK_COLS: 16, 32
#ifndef BLOCK_COLS
#define BLOCK_COLS 16
#endif

namespace {

constexpr int64_t kTileRows = 64;  // rows of c per OpenMP task
constexpr int64_t kRows = 4;       // rows of a register block
constexpr int64_t kCols = BLOCK_COLS;

// c[0..kRows, 0..kCols] += a[0..kRows, p0..p1] * b[p0..p1, 0..kCols]; a, b and c point at the
// block's corner.
void RegisterBlock(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t p0,
                   int64_t p1) {
  float acc[kRows][kCols];
  for (int64_t r = 0; r < kRows; ++r) {
#pragma omp simd
    for (int64_t v = 0; v < kCols; ++v) acc[r][v] = c[r * n + v];
  }
  for (int64_t p = p0; p < p1; ++p) {
    const float* bp = b + p * n;
    for (int64_t r = 0; r < kRows; ++r) {
      const float ar = a[r * k + p];
#pragma omp simd
      for (int64_t v = 0; v < kCols; ++v) acc[r][v] += ar * bp[v];
    }
  }
  for (int64_t r = 0; r < kRows; ++r) {
#pragma omp simd
    for (int64_t v = 0; v < kCols; ++v) c[r * n + v] = acc[r][v];
  }
}

// c[i, j0..j1] += a[i, p0..p1] * b[p0..p1, j0..j1] for one row i, in plain loops.
void EdgeRow(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t i, int64_t j0,
             int64_t j1, int64_t p0, int64_t p1) {
  float* ci = c + i * n;
  for (int64_t p = p0; p < p1; ++p) {
    const float aip = a[i * k + p];
    const float* bp = b + p * n;
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) ci[j] += aip * bp[j];
  }
}

// One tile of one matrix product: a, b and c point at the batch entry's matrices.
void Tile(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t i0, int64_t i1,
          int64_t j0, int64_t j1) {
  for (int64_t i = i0; i < i1; ++i) {
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) c[i * n + j] = 0.0f;
  }
  const int64_t block_cols_end = j0 + (j1 - j0) / kCols * kCols;
  for (int64_t p0 = 0; p0 < k; p0 += TILE_K) {
    const int64_t p1 = p0 + TILE_K < k ? p0 + TILE_K : k;
    int64_t i = i0;
    for (; i + kRows <= i1; i += kRows) {
      for (int64_t j = j0; j < block_cols_end; j += kCols) {
        RegisterBlock(a + i * k, b + j, c + i * n + j, n, k, p0, p1);
      }
      for (int64_t r = i; r < i + kRows; ++r) EdgeRow(a, b, c, n, k, r, block_cols_end, j1, p0, p1);
    }
    for (; i < i1; ++i) EdgeRow(a, b, c, n, k, i, j0, j1, p0, p1);
  }
}

}  // namespace

extern "C" void batched_matmul(const float* a, const float* b, float* c, int64_t batch, int64_t m,
                               int64_t n, int64_t k) {
  const int64_t row_tiles = (m + kTileRows - 1) / kTileRows;
  const int64_t col_tiles = (n + TILE_N - 1) / TILE_N;
#pragma omp parallel for collapse(3) schedule(dynamic)
  for (int64_t s = 0; s < batch; ++s) {
    for (int64_t tr = 0; tr < row_tiles; ++tr) {
      for (int64_t tc = 0; tc < col_tiles; ++tc) {
        const int64_t i0 = tr * kTileRows;
        const int64_t j0 = tc * TILE_N;
        const int64_t i1 = i0 + kTileRows < m ? i0 + kTileRows : m;
        Tile(a + s * m * k, b + s * k * n, c + s * m * n, n, k, i0, i1,
             j0, j0 + TILE_N < n ? j0 + TILE_N : n);
      }
    }
  }
}
