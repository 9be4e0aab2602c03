// Trusted GPU reference: conv1d in double, the same math as reference.cc: for each output the
// sum over p = c*kw + q in increasing order (c outer, q inner) of x[b, c, t + q] * w[o, c, q].
// Computed as an implicit GEMM per batch item, y[b] [cout, lo] = W [cout, cin*kw] @ X_b, with
// X_b[p, t] = x[b, c, t + q] read straight from x (no im2col buffer): a shared-memory tiled
// kernel, 64x64 output tile per block, 4x4 per thread. Grid x walks the output positions, y the
// output channels, z the batch, all with stride loops. No cuBLAS, so that the reference shares
// no code with the baseline.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kTile = 64;    // output tile edge
constexpr int kTileK = 16;   // depth of one shared-memory step
constexpr int kThreadsPerEdge = 16;
constexpr int kPerThread = kTile / kThreadsPerEdge;  // 4x4 outputs per thread
constexpr int kThreads = kThreadsPerEdge * kThreadsPerEdge;

__global__ void Conv1dReference(const float* x, const float* w, double* y, int64_t n, int64_t cin,
                                int64_t l, int64_t cout, int64_t kw, int64_t lo) {
  __shared__ double ws[kTileK][kTile + 1];  // ws[p][i] = w[row0 + i, k0 + p] (w as [cout, cin*kw])
  __shared__ double xs[kTileK][kTile];      // xs[p][j] = x[b, c, col0 + j + q] with p = c*kw + q
  const int tx = threadIdx.x % kThreadsPerEdge;
  const int ty = threadIdx.x / kThreadsPerEdge;
  const int64_t depth_total = cin * kw;
  const int64_t row_tiles = (cout + kTile - 1) / kTile;
  const int64_t col_tiles = (lo + kTile - 1) / kTile;
  for (int64_t b = blockIdx.z; b < n; b += gridDim.z) {
    const float* xb = x + b * cin * l;
    double* yb = y + b * cout * lo;
    for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
      for (int64_t tile_col = blockIdx.x; tile_col < col_tiles; tile_col += gridDim.x) {
        const int64_t row0 = tile_row * kTile;
        const int64_t col0 = tile_col * kTile;
        double acc[kPerThread][kPerThread] = {};
        for (int64_t k0 = 0; k0 < depth_total; k0 += kTileK) {
          for (int e = threadIdx.x; e < kTile * kTileK; e += kThreads) {
            const int i = e / kTileK;
            const int p = e % kTileK;
            const int64_t row = row0 + i;
            const int64_t depth = k0 + p;
            ws[p][i] = row < cout && depth < depth_total
                           ? static_cast<double>(w[row * depth_total + depth])
                           : 0.0;
          }
          for (int e = threadIdx.x; e < kTileK * kTile; e += kThreads) {
            const int p = e / kTile;
            const int j = e % kTile;
            const int64_t depth = k0 + p;
            const int64_t col = col0 + j;
            double value = 0.0;
            if (depth < depth_total && col < lo) {
              const int64_t c = depth / kw;
              const int64_t q = depth % kw;
              value = static_cast<double>(xb[c * l + col + q]);
            }
            xs[p][j] = value;
          }
          __syncthreads();
          for (int p = 0; p < kTileK; ++p) {
            double wv[kPerThread];
            double xv[kPerThread];
            // Strided ownership (ty + 16 i, tx + 16 j) keeps shared-memory reads conflict-free.
            for (int i = 0; i < kPerThread; ++i) wv[i] = ws[p][ty + kThreadsPerEdge * i];
            for (int j = 0; j < kPerThread; ++j) xv[j] = xs[p][tx + kThreadsPerEdge * j];
            for (int i = 0; i < kPerThread; ++i) {
              for (int j = 0; j < kPerThread; ++j) acc[i][j] += xv[j] * wv[i];
            }
          }
          __syncthreads();
        }
        for (int i = 0; i < kPerThread; ++i) {
          const int64_t row = row0 + ty + kThreadsPerEdge * i;
          if (row >= cout) continue;
          for (int j = 0; j < kPerThread; ++j) {
            const int64_t col = col0 + tx + kThreadsPerEdge * j;
            if (col < lo) yb[row * lo + col] = acc[i][j];
          }
        }
      }
    }
  }
}

}  // namespace

extern "C" void conv1d_reference_cuda(const float* x, const float* w, double* y, int64_t n,
                                      int64_t cin, int64_t l, int64_t cout, int64_t kw, int64_t lo,
                                      cudaStream_t stream) {
  if (n <= 0 || cout <= 0 || lo <= 0) return;
  if (cin <= 0 || kw <= 0) {
    // An empty sum: y is all zeros (the dims are positive in every task shape; this is a guard).
    cudaMemsetAsync(y, 0, static_cast<size_t>(n * cout * lo) * sizeof(double), stream);
    return;
  }
  const int64_t col_tiles = (lo + kTile - 1) / kTile;
  const int64_t row_tiles = (cout + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(n, 65535)));
  Conv1dReference<<<grid, kThreads, 0, stream>>>(x, w, y, n, cin, l, cout, kw, lo);
}
