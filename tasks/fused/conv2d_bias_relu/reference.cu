// Trusted GPU reference: y = relu(conv2d(x, wt) + b) in double, the same math as reference.cc (for
// each output, the sum over (ci, ky, kx) in that order, then + b[co], then max(z, 0)). Computed as
// an implicit GEMM: rows are output channels, columns are (image, oy, ox) positions, depth is
// (ci, ky, kx); the column tile gathers x straight from the image (no im2col buffer). A
// shared-memory tiled kernel (64x64 output tile per block, 4x4 per thread) so that a 15-GFLOP
// check takes milliseconds; no library, so that the reference shares no code with the baseline.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kTile = 64;    // output tile edge
constexpr int kTileK = 16;   // depth of one shared-memory step
constexpr int kThreadsPerEdge = 16;
constexpr int kPerThread = kTile / kThreadsPerEdge;  // 4x4 outputs per thread
constexpr int kThreads = kThreadsPerEdge * kThreadsPerEdge;

__global__ void Conv2dBiasReluReference(const float* x, const float* wt, const float* b, double* y,
                                        int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout,
                                        int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  __shared__ double ws[kTileK][kTile + 1];  // ws[p][i] = wt[row0 + i, k0 + p]
  __shared__ double xs[kTileK][kTile + 1];  // xs[p][j] = x at (column col0 + j, depth k0 + p)
  const int64_t depth_total = cin * kh * kw;
  const int64_t pixels = oh * ow;
  const int64_t columns = n * pixels;
  const int tx = threadIdx.x % kThreadsPerEdge;
  const int ty = threadIdx.x / kThreadsPerEdge;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t row_tiles = (cout + kTile - 1) / kTile;
  for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    const int64_t row0 = tile_row * kTile;
    double acc[kPerThread][kPerThread] = {};
    for (int64_t k0 = 0; k0 < depth_total; k0 += kTileK) {
      for (int e = threadIdx.x; e < kTile * kTileK; e += kThreads) {
        const int i = e / kTileK;
        const int p = e % kTileK;
        const int64_t row = row0 + i;
        const int64_t depth = k0 + p;
        ws[p][i] = row < cout && depth < depth_total ? static_cast<double>(wt[row * depth_total + depth]) : 0.0;
      }
      for (int e = threadIdx.x; e < kTileK * kTile; e += kThreads) {
        const int p = e / kTile;
        const int j = e % kTile;
        const int64_t depth = k0 + p;
        const int64_t col = col0 + j;
        double value = 0.0;
        if (depth < depth_total && col < columns) {
          const int64_t nb = col / pixels;
          const int64_t pixel = col % pixels;
          const int64_t oy = pixel / ow;
          const int64_t ox = pixel % ow;
          const int64_t ci = depth / (kh * kw);
          const int64_t r = depth % (kh * kw);
          const int64_t ky = r / kw;
          const int64_t kx = r % kw;
          value = x[((nb * cin + ci) * h + oy + ky) * w + ox + kx];
        }
        xs[p][j] = value;
      }
      __syncthreads();
      for (int p = 0; p < kTileK; ++p) {
        double wv[kPerThread];
        double xv[kPerThread];
        for (int i = 0; i < kPerThread; ++i) wv[i] = ws[p][ty + kThreadsPerEdge * i];
        for (int j = 0; j < kPerThread; ++j) xv[j] = xs[p][tx + kThreadsPerEdge * j];
        for (int i = 0; i < kPerThread; ++i) {
          for (int j = 0; j < kPerThread; ++j) acc[i][j] += xv[j] * wv[i];
        }
      }
      __syncthreads();
    }
    for (int i = 0; i < kPerThread; ++i) {
      const int64_t co = row0 + ty + kThreadsPerEdge * i;
      if (co >= cout) continue;
      for (int j = 0; j < kPerThread; ++j) {
        const int64_t col = col0 + tx + kThreadsPerEdge * j;
        if (col >= columns) continue;
        const int64_t nb = col / pixels;
        const int64_t pixel = col % pixels;
        const double z = acc[i][j] + static_cast<double>(b[co]);
        y[(nb * cout + co) * pixels + pixel] = z > 0.0 ? z : 0.0;
      }
    }
  }
}

}  // namespace

extern "C" void conv2d_bias_relu_reference_cuda(const float* x, const float* wt, const float* b, double* y,
                                                int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout,
                                                int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                                cudaStream_t stream) {
  if (n <= 0 || cout <= 0 || oh <= 0 || ow <= 0) return;
  const int64_t col_tiles = (n * oh * ow + kTile - 1) / kTile;
  const int64_t row_tiles = (cout + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  Conv2dBiasReluReference<<<grid, kThreads, 0, stream>>>(x, wt, b, y, n, cin, h, w, cout, kh, kw, oh, ow);
}
