// Trusted GPU reference: da = dc @ b^T and db = a^T @ dc with every product and sum in double.
// One shared-memory tiled kernel (64x64 output tile per block, 4x4 per thread) computes
// c[i, j] = sum_q A(i, q) * B(q, j) for operands read through strides, A(i, q) = A[i*sai + q*saq]
// and B(q, j) = B[q*sbq + j*sbj], so that both products read a, b and dc in place; it is launched
// once per gradient. No cuBLAS, so that the reference shares no code with the baseline.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kTile = 64;    // output tile edge
constexpr int kTileK = 16;   // depth of one shared-memory step
constexpr int kThreadsPerEdge = 16;
constexpr int kPerThread = kTile / kThreadsPerEdge;  // 4x4 outputs per thread
constexpr int kThreads = kThreadsPerEdge * kThreadsPerEdge;

struct Operand {
  const float* data;
  int64_t row_stride;  // step of the first index
  int64_t col_stride;  // step of the second index
};

// c [rows, cols] row-major = A [rows, depth] @ B [depth, cols].
__global__ void GemmReference(Operand a, Operand b, double* c, int64_t rows, int64_t cols, int64_t depth) {
  __shared__ double as[kTileK][kTile + 1];  // as[q][i] = A(row0 + i, k0 + q)
  __shared__ double bs[kTileK][kTile + 1];  // bs[q][j] = B(k0 + q, col0 + j)
  const int tx = threadIdx.x % kThreadsPerEdge;
  const int ty = threadIdx.x / kThreadsPerEdge;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    const int64_t row0 = tile_row * kTile;
    double acc[kPerThread][kPerThread] = {};
    for (int64_t k0 = 0; k0 < depth; k0 += kTileK) {
      for (int e = threadIdx.x; e < kTile * kTileK; e += kThreads) {
        const int i = e / kTileK;
        const int q = e % kTileK;
        const int64_t row = row0 + i;
        const int64_t d = k0 + q;
        as[q][i] = row < rows && d < depth ? static_cast<double>(a.data[row * a.row_stride + d * a.col_stride])
                                           : 0.0;
      }
      for (int e = threadIdx.x; e < kTileK * kTile; e += kThreads) {
        const int q = e / kTile;
        const int j = e % kTile;
        const int64_t d = k0 + q;
        const int64_t col = col0 + j;
        bs[q][j] = d < depth && col < cols ? static_cast<double>(b.data[d * b.row_stride + col * b.col_stride])
                                           : 0.0;
      }
      __syncthreads();
      for (int q = 0; q < kTileK; ++q) {
        double av[kPerThread];
        double bv[kPerThread];
        for (int i = 0; i < kPerThread; ++i) av[i] = as[q][ty + kThreadsPerEdge * i];
        for (int j = 0; j < kPerThread; ++j) bv[j] = bs[q][tx + kThreadsPerEdge * j];
        for (int i = 0; i < kPerThread; ++i) {
          for (int j = 0; j < kPerThread; ++j) acc[i][j] += av[i] * bv[j];
        }
      }
      __syncthreads();
    }
    for (int i = 0; i < kPerThread; ++i) {
      const int64_t row = row0 + ty + kThreadsPerEdge * i;
      if (row >= rows) continue;
      for (int j = 0; j < kPerThread; ++j) {
        const int64_t col = col0 + tx + kThreadsPerEdge * j;
        if (col < cols) c[row * cols + col] = acc[i][j];
      }
    }
  }
}

void Launch(Operand a, Operand b, double* c, int64_t rows, int64_t cols, int64_t depth, cudaStream_t stream) {
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  GemmReference<<<grid, kThreads, 0, stream>>>(a, b, c, rows, cols, depth);
}

}  // namespace

extern "C" void matmul_backward_reference_cuda(const float* a, const float* b, const float* dc, double* da,
                                               double* db, int64_t m, int64_t n, int64_t k,
                                               cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  // da [m, k] = dc [m, n] @ b^T: A(i, j) = dc[i*n + j], B(j, p) = b[p*n + j].
  Launch({dc, n, 1}, {b, 1, n}, da, m, k, n, stream);
  // db [k, n] = a^T @ dc [m, n]: A(p, i) = a[i*k + p], B(i, j) = dc[i*n + j].
  Launch({a, 1, k}, {dc, n, 1}, db, k, n, m, stream);
}
