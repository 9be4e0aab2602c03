// Tuner seed for conv2d on a GPU, in full FP32 (FMA on CUDA cores, no library): an implicit GEMM
// per batch item, y[b] [cout, oh*ow] = Wt [cout, cin*kh*kw] @ X_b with
// X_b[p, i*ow + j] = x[b, c, i + r, j + s] (p = (c*kh + r)*kw + s) gathered straight from x into
// shared memory, no im2col buffer. A block computes a TILE_O (output channels) x TILE_S (output
// positions) tile, stepping through the cin*kh*kw depth K_STEP at a time; each thread keeps 4 x 4
// outputs in registers, owning strided rows and columns (ty + EDGE_O i, tx + EDGE_S j) so that
// shared-memory reads are broadcasts or conflict-free and stores to y are coalesced. Loads
// outside the tensors read zero, stores outside are skipped, and grid x, y and z (positions,
// channels, batch) are walked with stride loops: every shape works.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune TILE_O: 64, 32
#ifndef TILE_O
#define TILE_O 64
#endif

// @tune TILE_S: 64, 128
#ifndef TILE_S
#define TILE_S 64
#endif

// @tune K_STEP: 16, 8
#ifndef K_STEP
#define K_STEP 16
#endif
namespace {

constexpr int kPer = 4;                   // outputs per thread along each side
constexpr int kEdgeO = TILE_O / kPer;     // threads along the channel side
constexpr int kEdgeS = TILE_S / kPer;     // threads along the position side
constexpr int kThreads = kEdgeO * kEdgeS;  // 128 to 512 over the knobs' values
constexpr int kStep = K_STEP;

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

__global__ void __launch_bounds__(kThreads)
    Conv2d(const float* __restrict__ x, const float* __restrict__ wt, float* __restrict__ y,
           int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw,
           int64_t oh, int64_t ow) {
  __shared__ float ws[kStep][TILE_O + 4];  // ws[p][i] = wt[o0 + i, k0 + p], padded
  __shared__ float xs[kStep][TILE_S];      // xs[p][j] = X_b[k0 + p, t0 + j]
  const int tx = threadIdx.x % kEdgeS;
  const int ty = threadIdx.x / kEdgeS;
  const int64_t window = kh * kw;
  const int64_t depth_total = cin * window;
  const int64_t positions = oh * ow;
  const int64_t row_tiles = (cout + TILE_O - 1) / TILE_O;
  const int64_t col_tiles = (positions + TILE_S - 1) / TILE_S;
  for (int64_t b = blockIdx.z; b < n; b += gridDim.z) {
    const float* xb = x + b * cin * h * w;
    float* yb = y + b * cout * positions;
    for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
      for (int64_t tile_col = blockIdx.x; tile_col < col_tiles; tile_col += gridDim.x) {
        const int64_t o0 = tile_row * TILE_O;
        const int64_t t0 = tile_col * TILE_S;
        float acc[kPer][kPer] = {};
        for (int64_t k0 = 0; k0 < depth_total; k0 += kStep) {
          for (int e = threadIdx.x; e < TILE_O * kStep; e += kThreads) {
            const int i = e / kStep;
            const int p = e % kStep;
            const int64_t o = o0 + i;
            const int64_t depth = k0 + p;
            ws[p][i] = o < cout && depth < depth_total ? wt[o * depth_total + depth] : 0.0f;
          }
          for (int e = threadIdx.x; e < kStep * TILE_S; e += kThreads) {
            const int p = e / TILE_S;
            const int j = e % TILE_S;
            const int64_t depth = k0 + p;
            const int64_t t = t0 + j;
            float value = 0.0f;
            if (depth < depth_total && t < positions) {
              const int64_t c = depth / window;
              const int64_t rs = depth - c * window;
              const int64_t r = rs / kw;
              const int64_t i = t / ow;
              value = xb[(c * h + i + r) * w + (t - i * ow) + (rs - r * kw)];
            }
            xs[p][j] = value;
          }
          __syncthreads();
#pragma unroll
          for (int p = 0; p < kStep; ++p) {
            float wv[kPer];
            float xv[kPer];
#pragma unroll
            for (int i = 0; i < kPer; ++i) wv[i] = ws[p][ty + kEdgeO * i];
#pragma unroll
            for (int j = 0; j < kPer; ++j) xv[j] = xs[p][tx + kEdgeS * j];
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
#pragma unroll
              for (int j = 0; j < kPer; ++j) acc[i][j] = fmaf(wv[i], xv[j], acc[i][j]);
            }
          }
          __syncthreads();  // the stage is refilled only after every thread has read it
        }
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
          const int64_t o = o0 + ty + kEdgeO * i;
          if (o >= cout) continue;
#pragma unroll
          for (int j = 0; j < kPer; ++j) {
            const int64_t t = t0 + tx + kEdgeS * j;
            if (t < positions) yb[o * positions + t] = acc[i][j];
          }
        }
      }
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

extern "C" void conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t cin, int64_t h,
                       int64_t w, int64_t cout, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                       cudaStream_t stream) {
  if (n <= 0 || cin <= 0 || cout <= 0 || kh <= 0 || kw <= 0 || oh <= 0 || ow <= 0) return;
  const int64_t row_tiles = (cout + TILE_O - 1) / TILE_O;
  const int64_t col_tiles = (oh * ow + TILE_S - 1) / TILE_S;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(n, 65535)));
  KSMITH_LAUNCH(grid, kThreads, 0, stream, Conv2d)(x, wt, y, n, cin, h, w, cout, kh, kw, oh, ow);
}
#endif  // KSMITH_HOST
