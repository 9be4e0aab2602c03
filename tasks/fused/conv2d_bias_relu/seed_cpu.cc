// Tuner seed for conv2d_bias_relu, fused, as a direct convolution: OpenMP threads take
// (image, block of CO_BLOCK output channels, output row) triples. For a run of OX_TILE output
// pixels of that row, CO_BLOCK x OX_TILE sums stay in registers while the (ci, ky, kx) loop reads
// one shifted input run x[nb, ci, oy + ky, ox + kx ...] and adds it, times each channel's weight,
// to every channel of the block: an input load feeds CO_BLOCK vector multiply-adds. The bias and
// the ReLU are applied before the single store: no im2col buffer, no conv output in memory. The
// last pixels of a row (fewer than OX_TILE) and the last channels (fewer than CO_BLOCK) take the
// same code with bounds that the compiler cannot unroll.
#include <cstdint>

// @tune CO_BLOCK: 4, 8
#ifndef CO_BLOCK
#define CO_BLOCK 4
#endif

// @tune OX_TILE: 16, 32
#ifndef OX_TILE
#define OX_TILE 16
#endif

namespace {

// y[nb, co0 + c, oy, ox0 + v] for c < channels (<= CO_BLOCK), v < len (<= OX_TILE).
template <bool kFull>
void Run(const float* x, const float* wt, const float* b, float* y, int64_t cin, int64_t h, int64_t w,
         int64_t cout, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t nb, int64_t co0,
         int64_t channels, int64_t oy, int64_t ox0, int64_t len) {
  const int64_t n_len = kFull ? OX_TILE : len;
  float acc[CO_BLOCK][OX_TILE];
  for (int64_t c = 0; c < CO_BLOCK; ++c) {
#pragma omp simd
    for (int64_t v = 0; v < OX_TILE; ++v) acc[c][v] = 0.0f;
  }
  for (int64_t ci = 0; ci < cin; ++ci) {
    for (int64_t ky = 0; ky < kh; ++ky) {
      const float* xrow = x + ((nb * cin + ci) * h + oy + ky) * w + ox0;
      for (int64_t kx = 0; kx < kw; ++kx) {
        float wv[CO_BLOCK];
        for (int64_t c = 0; c < CO_BLOCK; ++c) {
          wv[c] = c < channels ? wt[(((co0 + c) * cin + ci) * kh + ky) * kw + kx] : 0.0f;
        }
        const float* xs = xrow + kx;
        for (int64_t c = 0; c < CO_BLOCK; ++c) {
#pragma omp simd
          for (int64_t v = 0; v < n_len; ++v) acc[c][v] += wv[c] * xs[v];
        }
      }
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    float* yrow = y + ((nb * cout + co0 + c) * oh + oy) * ow + ox0;
    const float bias = b[co0 + c];
#pragma omp simd
    for (int64_t v = 0; v < n_len; ++v) {
      const float z = acc[c][v] + bias;
      yrow[v] = z > 0.0f ? z : 0.0f;
    }
  }
}

}  // namespace

extern "C" void conv2d_bias_relu(const float* x, const float* wt, const float* b, float* y, int64_t n,
                                 int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw,
                                 int64_t oh, int64_t ow) {
  const int64_t co_blocks = (cout + CO_BLOCK - 1) / CO_BLOCK;
#pragma omp parallel for collapse(3) schedule(dynamic, 4)
  for (int64_t nb = 0; nb < n; ++nb) {
    for (int64_t cb = 0; cb < co_blocks; ++cb) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t co0 = cb * CO_BLOCK;
        const int64_t channels = co0 + CO_BLOCK < cout ? CO_BLOCK : cout - co0;
        int64_t ox0 = 0;
        for (; ox0 + OX_TILE <= ow; ox0 += OX_TILE) {
          Run<true>(x, wt, b, y, cin, h, w, cout, kh, kw, oh, ow, nb, co0, channels, oy, ox0, OX_TILE);
        }
        if (ox0 < ow) {
          Run<false>(x, wt, b, y, cin, h, w, cout, kh, kw, oh, ow, nb, co0, channels, oy, ox0, ow - ox0);
        }
      }
    }
  }
}
