// Tuner seed for matmul_backward: both gradients with one register-blocked GEMM,
// c [rows, cols] = A (rows x depth, read through strides) @ B (depth x cols, row-major):
//   db [k, n] = a^T @ dc reads a in place (A(p, i) = a[i*k + p]) and dc as B;
//   da [m, k] = dc @ b^T needs b^T as a row-major B: b is transposed once into a buffer (k*n
//   floats, little next to the 2*m*n*k flops).
// c is cut into tiles of 64 rows x TILE_N columns, handed to OpenMP threads; each tile accumulates
// TILE_K-deep slices, so that the slice of B it reuses stays in cache. Inside a tile, 4 x BLOCK_COLS
// blocks of c are held in registers across a whole slice; edges take plain loops. BLOCK_COLS 32
// keeps 8 independent accumulator vectors busy with AVX-512 but spills with AVX2. Every element of
// c is summed by one thread in a fixed order: the result is deterministic.
#include <algorithm>
#include <cstdint>
#include <vector>

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

// A (rows x depth) through strides: A(r, d) = data[r * row_stride + d * depth_stride].
struct Lhs {
  const float* data;
  int64_t row_stride;
  int64_t depth_stride;
  float At(int64_t r, int64_t d) const { return data[r * row_stride + d * depth_stride]; }
};

// c[r0..r0+kRows, j..j+kCols] += A[r0.., d0..d1] * B[d0..d1, j..j+kCols].
void RegisterBlock(const Lhs& a, const float* b, float* c, int64_t cols, int64_t r0, int64_t j,
                   int64_t d0, int64_t d1) {
  float acc[kRows][kCols];
  for (int64_t r = 0; r < kRows; ++r) {
#pragma omp simd
    for (int64_t v = 0; v < kCols; ++v) acc[r][v] = c[(r0 + r) * cols + j + v];
  }
  for (int64_t d = d0; d < d1; ++d) {
    const float* bd = b + d * cols + j;
    for (int64_t r = 0; r < kRows; ++r) {
      const float ar = a.At(r0 + r, d);
#pragma omp simd
      for (int64_t v = 0; v < kCols; ++v) acc[r][v] += ar * bd[v];
    }
  }
  for (int64_t r = 0; r < kRows; ++r) {
#pragma omp simd
    for (int64_t v = 0; v < kCols; ++v) c[(r0 + r) * cols + j + v] = acc[r][v];
  }
}

// c[i, j0..j1] += A[i, d0..d1] * B[d0..d1, j0..j1] for one row i, in plain loops.
void EdgeRow(const Lhs& a, const float* b, float* c, int64_t cols, int64_t i, int64_t j0, int64_t j1,
             int64_t d0, int64_t d1) {
  float* ci = c + i * cols;
  for (int64_t d = d0; d < d1; ++d) {
    const float aid = a.At(i, d);
    const float* bd = b + d * cols;
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) ci[j] += aid * bd[j];
  }
}

void Tile(const Lhs& a, const float* b, float* c, int64_t cols, int64_t depth, int64_t i0, int64_t i1,
          int64_t j0, int64_t j1) {
  for (int64_t i = i0; i < i1; ++i) {
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) c[i * cols + j] = 0.0f;
  }
  const int64_t block_cols_end = j0 + (j1 - j0) / kCols * kCols;
  for (int64_t d0 = 0; d0 < depth; d0 += TILE_K) {
    const int64_t d1 = std::min<int64_t>(d0 + TILE_K, depth);
    int64_t i = i0;
    for (; i + kRows <= i1; i += kRows) {
      for (int64_t j = j0; j < block_cols_end; j += kCols) RegisterBlock(a, b, c, cols, i, j, d0, d1);
      for (int64_t r = i; r < i + kRows; ++r) EdgeRow(a, b, c, cols, r, block_cols_end, j1, d0, d1);
    }
    for (; i < i1; ++i) EdgeRow(a, b, c, cols, i, j0, j1, d0, d1);
  }
}

// c [rows, cols] = A @ B, tiles spread over the threads.
void Gemm(const Lhs& a, const float* b, float* c, int64_t rows, int64_t cols, int64_t depth) {
  const int64_t row_tiles = (rows + kTileRows - 1) / kTileRows;
  const int64_t col_tiles = (cols + TILE_N - 1) / TILE_N;
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t tr = 0; tr < row_tiles; ++tr) {
    for (int64_t tc = 0; tc < col_tiles; ++tc) {
      const int64_t i0 = tr * kTileRows;
      const int64_t j0 = tc * TILE_N;
      Tile(a, b, c, cols, depth, i0, std::min(i0 + kTileRows, rows), j0, std::min<int64_t>(j0 + TILE_N, cols));
    }
  }
}

}  // namespace

extern "C" void matmul_backward(const float* a, const float* b, const float* dc, float* da, float* db,
                                int64_t m, int64_t n, int64_t k) {
  // b^T [n, k], transposed in 32 x 32 blocks.
  std::vector<float> bt(static_cast<size_t>(n * k));
  constexpr int64_t kBlock = 32;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t p0 = 0; p0 < k; p0 += kBlock) {
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      for (int64_t p = p0; p < std::min(p0 + kBlock, k); ++p) {
        for (int64_t j = j0; j < std::min(j0 + kBlock, n); ++j) bt[j * k + p] = b[p * n + j];
      }
    }
  }
  Gemm(Lhs{dc, n, 1}, bt.data(), da, m, k, n);  // da [m, k] = dc [m, n] @ b^T [n, k]
  Gemm(Lhs{a, 1, k}, dc, db, k, n, m);          // db [k, n] = a^T [k, m] @ dc [m, n]
}
