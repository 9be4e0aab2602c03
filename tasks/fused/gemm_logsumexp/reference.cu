// Trusted GPU reference: y[i] = logsumexp_j((x @ w^T + b)[i, j]) with every product and sum in
// double, the same math as reference.cc (each z_ij summed over k in order, + b[j]; the row max M
// and y = M + log(sum_j exp(z_ij - M))), the max and the sum gathered in one pass with a running
// max (a sum kept relative to the largest z seen so far is rescaled when a larger one comes). A
// block owns 64 rows and walks every 64-column tile of z in turn, with the shared-memory tiling
// of a matmul (4x4 sums per thread, so that a 4096^3-class check takes milliseconds); each thread
// keeps its rows' (max, sum) over the columns it owned, and the block combines them at the end.
// No library, so that the reference shares no code with the baseline.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kTile = 64;    // rows and columns of one tile of z
constexpr int kTileK = 16;   // depth of one shared-memory step
constexpr int kThreadsPerEdge = 16;
constexpr int kPerThread = kTile / kThreadsPerEdge;  // 4x4 sums per thread
constexpr int kThreads = kThreadsPerEdge * kThreadsPerEdge;

__global__ void GemmLogsumexpReference(const float* x, const float* w, const float* b, double* y,
                                       int64_t m, int64_t n, int64_t k) {
  __shared__ double xs[kTileK][kTile + 1];  // xs[p][i] = x[row0 + i, k0 + p]
  __shared__ double ws[kTileK][kTile + 1];  // ws[p][j] = w[col0 + j, k0 + p]
  __shared__ double part_max[kTile][kThreadsPerEdge + 1];  // [i][tx]: row i, thread column tx
  __shared__ double part_sum[kTile][kThreadsPerEdge + 1];
  const int tx = threadIdx.x % kThreadsPerEdge;
  const int ty = threadIdx.x / kThreadsPerEdge;
  const int64_t row_tiles = (m + kTile - 1) / kTile;
  for (int64_t tile_row = blockIdx.x; tile_row < row_tiles; tile_row += gridDim.x) {
    const int64_t row0 = tile_row * kTile;
    double run_max[kPerThread];
    double run_sum[kPerThread];
    for (int i = 0; i < kPerThread; ++i) {
      run_max[i] = -INFINITY;  // no column seen yet: the sum is 0 relative to anything
      run_sum[i] = 0.0;
    }
    for (int64_t col0 = 0; col0 < n; col0 += kTile) {
      double acc[kPerThread][kPerThread] = {};
      for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
        for (int e = threadIdx.x; e < kTile * kTileK; e += kThreads) {
          const int i = e / kTileK;
          const int p = e % kTileK;
          const int64_t depth = k0 + p;
          const int64_t row = row0 + i;
          const int64_t col = col0 + i;
          xs[p][i] = row < m && depth < k ? static_cast<double>(x[row * k + depth]) : 0.0;
          ws[p][i] = col < n && depth < k ? static_cast<double>(w[col * k + depth]) : 0.0;
        }
        __syncthreads();
        for (int p = 0; p < kTileK; ++p) {
          double xv[kPerThread];
          double wv[kPerThread];
          for (int i = 0; i < kPerThread; ++i) xv[i] = xs[p][ty + kThreadsPerEdge * i];
          for (int j = 0; j < kPerThread; ++j) wv[j] = ws[p][tx + kThreadsPerEdge * j];
          for (int i = 0; i < kPerThread; ++i) {
            for (int j = 0; j < kPerThread; ++j) acc[i][j] += xv[i] * wv[j];
          }
        }
        __syncthreads();
      }
      for (int j = 0; j < kPerThread; ++j) {
        const int64_t col = col0 + tx + kThreadsPerEdge * j;
        if (col >= n) continue;
        const double bias = b[col];
        for (int i = 0; i < kPerThread; ++i) {
          const double z = acc[i][j] + bias;
          if (z > run_max[i]) {
            run_sum[i] = run_sum[i] * exp(run_max[i] - z) + 1.0;  // exp(-inf) = 0 at the first
            run_max[i] = z;
          } else {
            run_sum[i] += exp(z - run_max[i]);
          }
        }
      }
    }
    for (int i = 0; i < kPerThread; ++i) {
      part_max[ty + kThreadsPerEdge * i][tx] = run_max[i];
      part_sum[ty + kThreadsPerEdge * i][tx] = run_sum[i];
    }
    __syncthreads();
    if (threadIdx.x < kTile && row0 + threadIdx.x < m) {
      double mx = -INFINITY;
      for (int t = 0; t < kThreadsPerEdge; ++t) mx = fmax(mx, part_max[threadIdx.x][t]);
      double sum = 0.0;
      for (int t = 0; t < kThreadsPerEdge; ++t) {
        // A thread that owned no column of this row has (-inf, 0) and adds 0.
        if (part_sum[threadIdx.x][t] > 0.0) sum += part_sum[threadIdx.x][t] * exp(part_max[threadIdx.x][t] - mx);
      }
      y[row0 + threadIdx.x] = mx + log(sum);
    }
    __syncthreads();  // the partials are rewritten only after they have been read
  }
}

}  // namespace

extern "C" void gemm_logsumexp_reference_cuda(const float* x, const float* w, const float* b, double* y,
                                              int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  if (m <= 0) return;
  // n <= 0 or k <= 0 never occurs in a task shape.
  const int64_t row_tiles = (m + kTile - 1) / kTile;
  const int64_t blocks = std::min<int64_t>(row_tiles, int64_t{1} << 20);
  GemmLogsumexpReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, w, b, y, m, n, k);
}
