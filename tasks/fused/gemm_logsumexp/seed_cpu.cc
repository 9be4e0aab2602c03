// Tuner seed for gemm_logsumexp, fused: z = x @ w^T + b is cut into tiles of 64 rows x TILE_N
// columns, handed to OpenMP threads. A tile accumulates its z in TILE_K-deep slices into a
// per-thread buffer: each slice of w (rows j, depth p) is first packed transposed, so that the
// inner loop reads it along j like a row-major b of a plain matmul, and 8 x 16 blocks of
// z are held in registers across a whole slice (edges take plain loops). Once a tile has its full
// k-sums, b is added and each row's (max, sum of exp(z - max)) over the tile's columns is taken
// while the tile is still in cache, a partial per (column tile, row); y[i] combines row i's
// partials: M = the largest max, y = M + log(sum of partial sums * exp(partial max - M)). z never
// goes to memory.
// std::exp is a scalar library call the compiler cannot vectorize without -ffast-math; with
// POLY_EXP a polynomial exp (range reduction by ln 2, degree-7 Taylor series, relative error about
// 1e-7, for arguments <= 0 as z - max always is) is plain arithmetic that `omp simd` turns into
// full-width vector code.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

// @tune TILE_N: 128, 256
#ifndef TILE_N
#define TILE_N 128
#endif

// @tune TILE_K: 128, 256
#ifndef TILE_K
#define TILE_K 256
#endif

// @tune POLY_EXP: 1, 0
#ifndef POLY_EXP
#define POLY_EXP 1
#endif

namespace {

constexpr int64_t kTileRows = 64;  // rows of z per OpenMP task
constexpr int64_t kRows = 8;       // rows of a register block
constexpr int64_t kCols = 16;      // columns of a register block

// exp(v) for v <= 0; below -87 it returns about 1e-38 instead of a smaller number, an absolute
// error no sum that holds exp(0) = 1 can see.
#pragma omp declare simd
inline float PolyExp(float v) {
  const float x = v < -87.0f ? -87.0f : v;
  // Round x / ln 2 to the nearest integer by adding and removing 1.5 * 2^23.
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;  // ln 2 in two parts
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) * (1 << 23);  // 2^n as a float
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
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

// For i in [i0, i1): part_max[i - i0] = max_{j in [j0, j1)} z[i, j] and part_sum[i - i0] =
// sum_{j in [j0, j1)} exp(z[i, j] - part_max[i - i0]); `packed` holds TILE_K x TILE_N floats, `z`
// kTileRows x TILE_N.
void Tile(const float* x, const float* w, const float* b, float* part_max, float* part_sum, int64_t k,
          int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* packed, float* z) {
  const int64_t rows = i1 - i0;
  const int64_t cols = j1 - j0;
  for (int64_t e = 0; e < rows * cols; ++e) z[e] = 0.0f;
  const int64_t block_cols = cols / kCols * kCols;
  for (int64_t p0 = 0; p0 < k; p0 += TILE_K) {
    const int64_t depth = p0 + TILE_K < k ? TILE_K : k - p0;
    // packed[p, v] = w[j0 + v, p0 + p]: the slice of w^T this tile multiplies by.
    for (int64_t v = 0; v < cols; ++v) {
      const float* wv = w + (j0 + v) * k + p0;
      for (int64_t p = 0; p < depth; ++p) packed[p * cols + v] = wv[p];
    }
    int64_t r = 0;
    for (; r + kRows <= rows; r += kRows) {
      const float* xr = x + (i0 + r) * k + p0;
      for (int64_t v = 0; v < block_cols; v += kCols) {
        RegisterBlock(xr, k, packed + v, cols, z + r * cols + v, cols, depth);
      }
      for (int64_t q = r; q < r + kRows; ++q) {
        EdgeRow(x + (i0 + q) * k + p0, packed + block_cols, cols, z + q * cols + block_cols,
                cols - block_cols, depth);
      }
    }
    for (; r < rows; ++r) EdgeRow(x + (i0 + r) * k + p0, packed, cols, z + r * cols, cols, depth);
  }
  const float* bj = b + j0;
  for (int64_t r = 0; r < rows; ++r) {
    float* zr = z + r * cols;
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int64_t v = 0; v < cols; ++v) {
      zr[v] += bj[v];
      mx = zr[v] > mx ? zr[v] : mx;
    }
    float sum = 0.0f;
#if POLY_EXP
#pragma omp simd reduction(+ : sum)
    for (int64_t v = 0; v < cols; ++v) sum += PolyExp(zr[v] - mx);
#else
    for (int64_t v = 0; v < cols; ++v) sum += std::exp(zr[v] - mx);
#endif
    part_max[r] = mx;
    part_sum[r] = sum;
  }
}

}  // namespace

extern "C" void gemm_logsumexp(const float* x, const float* w, const float* b, float* y, int64_t m,
                               int64_t n, int64_t k) {
  const int64_t row_tiles = (m + kTileRows - 1) / kTileRows;
  const int64_t col_tiles = (n + TILE_N - 1) / TILE_N;
  // part_max[tc * m + i], part_sum[tc * m + i]: row i over column tile tc.
  std::vector<float> part_max(static_cast<size_t>(col_tiles * m));
  std::vector<float> part_sum(static_cast<size_t>(col_tiles * m));
#pragma omp parallel
  {
    std::vector<float> packed(static_cast<size_t>(TILE_K) * TILE_N);
    std::vector<float> z(static_cast<size_t>(kTileRows) * TILE_N);
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t tr = 0; tr < row_tiles; ++tr) {
      for (int64_t tc = 0; tc < col_tiles; ++tc) {
        const int64_t i0 = tr * kTileRows;
        const int64_t j0 = tc * TILE_N;
        Tile(x, w, b, part_max.data() + tc * m + i0, part_sum.data() + tc * m + i0, k, i0,
             i0 + kTileRows < m ? i0 + kTileRows : m, j0, j0 + TILE_N < n ? j0 + TILE_N : n,
             packed.data(), z.data());
      }
    }
#pragma omp for schedule(static)
    for (int64_t i = 0; i < m; ++i) {
      float mx = part_max[i];
      for (int64_t tc = 1; tc < col_tiles; ++tc) mx = part_max[tc * m + i] > mx ? part_max[tc * m + i] : mx;
      float sum = 0.0f;
      for (int64_t tc = 0; tc < col_tiles; ++tc) sum += part_sum[tc * m + i] * std::exp(part_max[tc * m + i] - mx);
      y[i] = mx + std::log(sum);
    }
  }
}
