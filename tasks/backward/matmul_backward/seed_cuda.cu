// Tuner seed for matmul_backward on a GPU, in full FP32 (FMA on CUDA cores; no TF32, no library):
// one tiled SGEMM kernel, c [rows, cols] = A [rows, depth] @ B [depth, cols], launched twice:
// da = dc @ b^T (A = dc as stored; B(q, p) = b[p*n + q], contiguous along the depth q) and
// db = a^T @ dc (A(p, i) = a[i*k + p], contiguous along the rows p; B = dc as stored). Template
// flags say along which index each operand is contiguous, so that the loads into shared memory
// run along it and stay coalesced; no transposed copies. A block computes a BLOCK_TILE x
// BLOCK_TILE tile of c, stepping through the depth K_STEP at a time; each thread keeps
// THREAD_TILE x THREAD_TILE outputs in registers, owning strided rows and columns
// (ty + EDGE i, tx + EDGE j) so that shared-memory reads are broadcasts or conflict-free. Loads
// outside the matrices read zero and stores outside are skipped, so every shape is handled.
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

// kADepthMajor: A(i, q) = a[i * lda + q] (contiguous along the depth q); otherwise
// A(i, q) = a[q * lda + i] (contiguous along the rows i).
// kBColMajor: B(q, j) = b[q * ldb + j] (contiguous along the columns j); otherwise
// B(q, j) = b[j * ldb + q] (contiguous along the depth q).
template <bool kADepthMajor, bool kBColMajor>
__global__ void __launch_bounds__(kThreads)
    Sgemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int64_t rows,
          int64_t cols, int64_t depth, int64_t lda, int64_t ldb) {
  // Padded rows: the stores of the depth-contiguous loads (consecutive threads, consecutive q)
  // fall in different banks.
  __shared__ float as[kStep][kTile + 4];  // as[q][i] = A(row0 + i, k0 + q)
  __shared__ float bs[kStep][kTile + 4];  // bs[q][j] = B(k0 + q, col0 + j)
  const int tx = threadIdx.x % kEdge;
  const int ty = threadIdx.x / kEdge;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    for (int64_t tile_col = blockIdx.x; tile_col < col_tiles; tile_col += gridDim.x) {
      const int64_t row0 = tile_row * kTile;
      const int64_t col0 = tile_col * kTile;
      float acc[kThreadTile][kThreadTile] = {};
      for (int64_t k0 = 0; k0 < depth; k0 += kStep) {
        for (int e = threadIdx.x; e < kTile * kStep; e += kThreads) {
          const int i = kADepthMajor ? e / kStep : e % kTile;
          const int q = kADepthMajor ? e % kStep : e / kTile;
          const int64_t row = row0 + i;
          const int64_t d = k0 + q;
          float v = 0.0f;
          if (row < rows && d < depth) v = kADepthMajor ? a[row * lda + d] : a[d * lda + row];
          as[q][i] = v;
        }
        for (int e = threadIdx.x; e < kStep * kTile; e += kThreads) {
          const int q = kBColMajor ? e / kTile : e % kStep;
          const int j = kBColMajor ? e % kTile : e / kStep;
          const int64_t d = k0 + q;
          const int64_t col = col0 + j;
          float v = 0.0f;
          if (d < depth && col < cols) v = kBColMajor ? b[d * ldb + col] : b[col * ldb + d];
          bs[q][j] = v;
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < kStep; ++q) {
          float av[kThreadTile];
          float bv[kThreadTile];
#pragma unroll
          for (int i = 0; i < kThreadTile; ++i) av[i] = as[q][ty + kEdge * i];
#pragma unroll
          for (int j = 0; j < kThreadTile; ++j) bv[j] = bs[q][tx + kEdge * j];
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
        if (row >= rows) continue;
#pragma unroll
        for (int j = 0; j < kThreadTile; ++j) {
          const int64_t col = col0 + tx + kEdge * j;
          if (col < cols) c[row * cols + col] = acc[i][j];
        }
      }
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

dim3 Grid(int64_t rows, int64_t cols) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  return dim3(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
              static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
}

}  // namespace

extern "C" void matmul_backward(const float* a, const float* b, const float* dc, float* da, float* db,
                                int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  // da [m, k] = dc [m, n] @ b^T: A(i, q) = dc[i*n + q], B(q, p) = b[p*n + q].
  KSMITH_LAUNCH(Grid(m, k), kThreads, 0, stream, Sgemm<true, false>)(dc, b, da, m, k, n, n, n);
  // db [k, n] = a^T @ dc: A(p, q) = a[q*k + p], B(q, j) = dc[q*n + j].
  KSMITH_LAUNCH(Grid(k, n), kThreads, 0, stream, Sgemm<false, true>)(a, dc, db, k, n, m, k, n);
}
#endif  // KSMITH_HOST
