// Tuner seed for gemm_bias_gelu, fused: y is cut into tiles of 64 rows x TILE_N columns, handed to
// OpenMP threads. A tile accumulates x @ w^T in TILE_K-deep slices straight into y: each slice of w
// (rows j, depth p) is first packed transposed into a per-thread buffer, so that the inner loop
// reads it along j like a row-major b of a plain matmul. Inside a tile, 8 x BLOCK_COLS blocks of y
// are held in registers across a whole slice (16 columns: 8 accumulator vectors with AVX-512, 16
// with AVX2; 32 columns: 16 with AVX-512, more than AVX2 has); edges that do not fill a block take
// plain loops. Once a tile has its full k-sum, + b and the GELU are applied while it is still in
// cache: z never goes to memory and back.
// std::erf is a scalar library call the compiler cannot vectorize without -ffast-math; the
// rational approximation (Eigen's and XLA's fast erf, |error| < 5e-7 against the exact erf) is
// plain arithmetic that `omp simd` turns into full-width vector code. It is used where
// 1 + erf(z / sqrt 2) >= 0.045 (z >= -2), so that its absolute error stays a small relative one;
// the few z below -2 are redone with std::erfc, which keeps its relative accuracy in the tail.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

// @tune TILE_N: 128, 256
#ifndef TILE_N
#define TILE_N 128
#endif

// @tune TILE_K: 128, 256
#ifndef TILE_K
#define TILE_K 256
#endif

// @tune BLOCK_COLS: 16, 32
#ifndef BLOCK_COLS
#define BLOCK_COLS 16
#endif

namespace {

constexpr int64_t kTileRows = 64;  // rows of y per OpenMP task
constexpr int64_t kRows = 8;       // rows of a register block
constexpr int64_t kCols = BLOCK_COLS;  // columns of a register block

// erf(v) for every float: beyond |v| = 4 erf is +-1 to float precision.
#pragma omp declare simd
inline float RationalErf(float v) {
  const float x = v < -4.0f ? -4.0f : (v > 4.0f ? 4.0f : v);
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return x * p / q;
}

// c[r, v] += sum_p a[r, p] * b[p, v] for r < kRows, v < kCols, p < depth; a has row stride lda,
// b (the packed slice) row stride ldb, c row stride ldc.
void RegisterBlock(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                   int64_t depth) {
  float acc[kRows][kCols];
  for (int64_t r = 0; r < kRows; ++r) {
#pragma omp simd
    for (int64_t v = 0; v < kCols; ++v) acc[r][v] = c[r * ldc + v];
  }
  for (int64_t p = 0; p < depth; ++p) {
    const float* bp = b + p * ldb;
    for (int64_t r = 0; r < kRows; ++r) {
      const float ar = a[r * lda + p];
#pragma omp simd
      for (int64_t v = 0; v < kCols; ++v) acc[r][v] += ar * bp[v];
    }
  }
  for (int64_t r = 0; r < kRows; ++r) {
#pragma omp simd
    for (int64_t v = 0; v < kCols; ++v) c[r * ldc + v] = acc[r][v];
  }
}

// c[v] += sum_p a[p] * b[p, v] for one row, v < cols, in plain loops.
void EdgeRow(const float* a, const float* b, int64_t ldb, float* c, int64_t cols, int64_t depth) {
  for (int64_t p = 0; p < depth; ++p) {
    const float ap = a[p];
    const float* bp = b + p * ldb;
#pragma omp simd
    for (int64_t v = 0; v < cols; ++v) c[v] += ap * bp[v];
  }
}

// y[i0..i1, j0..j1] = gelu(x[i0..i1, :] @ w[j0..j1, :]^T + b[j0..j1]); `packed` holds TILE_K x
// TILE_N floats.
void Tile(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t k, int64_t i0,
          int64_t i1, int64_t j0, int64_t j1, float* packed) {
  const int64_t cols = j1 - j0;
  for (int64_t i = i0; i < i1; ++i) {
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) y[i * n + j] = 0.0f;
  }
  const int64_t block_cols = cols / kCols * kCols;
  for (int64_t p0 = 0; p0 < k; p0 += TILE_K) {
    const int64_t depth = p0 + TILE_K < k ? TILE_K : k - p0;
    // packed[p, v] = w[j0 + v, p0 + p]: the slice of w^T this tile multiplies by.
    for (int64_t v = 0; v < cols; ++v) {
      const float* wv = w + (j0 + v) * k + p0;
      for (int64_t p = 0; p < depth; ++p) packed[p * cols + v] = wv[p];
    }
    int64_t i = i0;
    for (; i + kRows <= i1; i += kRows) {
      for (int64_t v = 0; v < block_cols; v += kCols) {
        RegisterBlock(x + i * k + p0, k, packed + v, cols, y + i * n + j0 + v, n, depth);
      }
      for (int64_t r = i; r < i + kRows; ++r) {
        EdgeRow(x + r * k + p0, packed + block_cols, cols, y + r * n + j0 + block_cols,
                cols - block_cols, depth);
      }
    }
    for (; i < i1; ++i) EdgeRow(x + i * k + p0, packed, cols, y + i * n + j0, cols, depth);
  }
  const float inv_sqrt2 = 0.70710678118654752f;
  float z[TILE_N];
  for (int64_t i = i0; i < i1; ++i) {
    float* yi = y + i * n + j0;
    const float* bj = b + j0;
#pragma omp simd
    for (int64_t v = 0; v < cols; ++v) {
      z[v] = yi[v] + bj[v];
      yi[v] = 0.5f * z[v] * (1.0f + RationalErf(z[v] * inv_sqrt2));
    }
    for (int64_t v = 0; v < cols; ++v) {
      if (z[v] < -2.0f) yi[v] = 0.5f * z[v] * std::erfc(-z[v] * inv_sqrt2);
    }
  }
}

}  // namespace

extern "C" void gemm_bias_gelu(const float* x, const float* w, const float* b, float* y, int64_t m,
                               int64_t n, int64_t k) {
  const int64_t row_tiles = (m + kTileRows - 1) / kTileRows;
  const int64_t col_tiles = (n + TILE_N - 1) / TILE_N;
#pragma omp parallel
  {
    std::vector<float> packed(static_cast<size_t>(TILE_K) * TILE_N);
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t tr = 0; tr < row_tiles; ++tr) {
      for (int64_t tc = 0; tc < col_tiles; ++tc) {
        const int64_t i0 = tr * kTileRows;
        const int64_t j0 = tc * TILE_N;
        Tile(x, w, b, y, n, k, i0, i0 + kTileRows < m ? i0 + kTileRows : m, j0,
             j0 + TILE_N < n ? j0 + TILE_N : n, packed.data());
      }
    }
  }
}
