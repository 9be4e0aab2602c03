// Tuner seed for depthwise_conv2d on a GPU: a block computes a TILE_H x TILE_W tile of output
// positions of one (batch, channel) plane. It stages the input patch the tile needs,
// (TILE_H + kh - 1) x (TILE_W + kw - 1) floats, and the plane's kh x kw filter in shared memory
// (coalesced row loads, each input element read from global memory about once instead of kh*kw
// times), then each of its 256 threads computes TILE_H * TILE_W / 256 outputs, consecutive
// threads on consecutive columns so that the stores are coalesced. Grid x, y and z (column tiles,
// row tiles, planes) are walked with stride loops, so any shape works; a window too large for
// shared memory (never in this task) takes a direct one-thread-per-output kernel.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune TILE_W: 32, 64
#ifndef TILE_W
#define TILE_W 32
#endif

// @tune TILE_H: 8, 16
#ifndef TILE_H
#define TILE_H 8
#endif
namespace {

constexpr int kThreads = 256;
constexpr size_t kMaxShared = 48 * 1024;  // what a launch may ask for without opting in

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

__global__ void __launch_bounds__(kThreads)
    DepthwiseTiled(const float* __restrict__ x, const float* __restrict__ wt, float* __restrict__ y,
                   int64_t planes, int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw,
                   int64_t oh, int64_t ow) {
  extern __shared__ float shared[];
  const int64_t in_w = TILE_W + kw - 1;  // patch row length
  const int64_t in_h = TILE_H + kh - 1;
  float* patch = shared;                  // patch[r * in_w + s] = x[plane, i0 + r, j0 + s]
  float* filter = shared + in_h * in_w;   // filter[r * kw + s] = wt[ch, r, s]
  const int64_t col_tiles = (ow + TILE_W - 1) / TILE_W;
  const int64_t row_tiles = (oh + TILE_H - 1) / TILE_H;
  for (int64_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    const float* xp = x + plane * h * w;
    float* yp = y + plane * oh * ow;
    const float* wp = wt + (plane % c) * kh * kw;
    for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
      for (int64_t tile_col = blockIdx.x; tile_col < col_tiles; tile_col += gridDim.x) {
        const int64_t i0 = tile_row * TILE_H;
        const int64_t j0 = tile_col * TILE_W;
        __syncthreads();  // every thread is done with the previous patch
        for (int64_t e = threadIdx.x; e < kh * kw; e += kThreads) filter[e] = wp[e];
        for (int64_t e = threadIdx.x; e < in_h * in_w; e += kThreads) {
          const int64_t r = e / in_w;
          const int64_t s = e - r * in_w;
          // Past the image's bottom or right edge the patch is never read for a stored output.
          patch[e] = i0 + r < h && j0 + s < w ? xp[(i0 + r) * w + j0 + s] : 0.0f;
        }
        __syncthreads();
        for (int e = threadIdx.x; e < TILE_H * TILE_W; e += kThreads) {
          const int ty = e / TILE_W;
          const int tx = e % TILE_W;
          if (i0 + ty >= oh || j0 + tx >= ow) continue;
          const float* in = patch + ty * in_w + tx;
          float sum = 0.0f;
          for (int64_t r = 0; r < kh; ++r) {
            for (int64_t s = 0; s < kw; ++s) sum = fmaf(in[r * in_w + s], filter[r * kw + s], sum);
          }
          yp[(i0 + ty) * ow + j0 + tx] = sum;
        }
      }
    }
  }
}

// Any window: one thread per output element, the window read from global memory.
__global__ void __launch_bounds__(kThreads)
    DepthwiseDirect(const float* __restrict__ x, const float* __restrict__ wt,
                    float* __restrict__ y, int64_t planes, int64_t c, int64_t h, int64_t w,
                    int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const int64_t total = planes * oh * ow;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t j = e % ow;
    const int64_t i = (e / ow) % oh;
    const int64_t plane = e / (ow * oh);
    const float* xp = x + (plane * h + i) * w + j;
    const float* wp = wt + (plane % c) * kh * kw;
    float sum = 0.0f;
    for (int64_t r = 0; r < kh; ++r) {
      for (int64_t s = 0; s < kw; ++s) sum = fmaf(xp[r * w + s], wp[r * kw + s], sum);
    }
    y[e] = sum;
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

extern "C" void depthwise_conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t c,
                                 int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t oh,
                                 int64_t ow, cudaStream_t stream) {
  const int64_t planes = n * c;
  if (planes <= 0 || oh <= 0 || ow <= 0 || kh <= 0 || kw <= 0) return;
  const size_t shared =
      static_cast<size_t>((TILE_H + kh - 1) * (TILE_W + kw - 1) + kh * kw) * sizeof(float);
  if (shared > kMaxShared) {
    const int64_t blocks =
        std::min<int64_t>((planes * oh * ow + kThreads - 1) / kThreads, int64_t{1} << 30);
    KSMITH_LAUNCH(static_cast<unsigned>(blocks), kThreads, 0, stream, DepthwiseDirect)(x, wt, y, planes, c, h,
                                                                            w, kh, kw, oh, ow);
    return;
  }
  const int64_t col_tiles = (ow + TILE_W - 1) / TILE_W;
  const int64_t row_tiles = (oh + TILE_H - 1) / TILE_H;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(planes, 65535)));
  KSMITH_LAUNCH(grid, kThreads, shared, stream, DepthwiseTiled)(x, wt, y, planes, c, h, w, kh, kw, oh, ow);
}
#endif  // KSMITH_HOST
