// Tuner seed for conv2d: direct convolution. The work is cut into (batch item, block of OBLOCK
// output channels, output row, tile of TILE_J output columns) pieces handed to OpenMP threads. A
// piece keeps its OBLOCK x TILE_J outputs in a local buffer (L1) while it walks every (c, r, s)
// of the filter: each input row segment loaded (a SIMD stream over j) is multiplied into OBLOCK
// output rows, so a larger OBLOCK reads x less often. Channels past cout in the last block get
// zero weights and are never stored.
#include <cstdint>

// @tune OBLOCK: 4, 8, 1
#ifndef OBLOCK
#define OBLOCK 4
#endif

// @tune TILE_J: 256, 64
#ifndef TILE_J
#define TILE_J 256
#endif

extern "C" void conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t cin, int64_t h,
                       int64_t w, int64_t cout, int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const int64_t oblocks = (cout + OBLOCK - 1) / OBLOCK;
  const int64_t jtiles = (ow + TILE_J - 1) / TILE_J;
  const int64_t window = cin * kh * kw;
  // Below this much work, starting threads costs more than it saves.
  const bool big = n * cout * oh * ow * window >= 100000;
#pragma omp parallel for collapse(4) schedule(dynamic) if (big)
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ob = 0; ob < oblocks; ++ob) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t jt = 0; jt < jtiles; ++jt) {
          const int64_t o0 = ob * OBLOCK;
          const int64_t outs = cout - o0 < OBLOCK ? cout - o0 : OBLOCK;
          const int64_t j0 = jt * TILE_J;
          const int64_t len = ow - j0 < TILE_J ? ow - j0 : TILE_J;
          float acc[OBLOCK][TILE_J];
          for (int64_t q = 0; q < OBLOCK; ++q) {
#pragma omp simd
            for (int64_t j = 0; j < TILE_J; ++j) acc[q][j] = 0.0f;
          }
          for (int64_t c = 0; c < cin; ++c) {
            for (int64_t r = 0; r < kh; ++r) {
              const float* xrow = x + ((b * cin + c) * h + i + r) * w + j0;
              for (int64_t s = 0; s < kw; ++s) {
                const float* xs = xrow + s;
                float wv[OBLOCK];
                for (int64_t q = 0; q < OBLOCK; ++q) {
                  wv[q] = q < outs ? wt[(((o0 + q) * cin + c) * kh + r) * kw + s] : 0.0f;
                }
#pragma omp simd
                for (int64_t j = 0; j < len; ++j) {
                  const float v = xs[j];
                  for (int64_t q = 0; q < OBLOCK; ++q) acc[q][j] += wv[q] * v;
                }
              }
            }
          }
          for (int64_t q = 0; q < outs; ++q) {
            float* yq = y + ((b * cout + o0 + q) * oh + i) * ow + j0;
#pragma omp simd
            for (int64_t j = 0; j < len; ++j) yq[j] = acc[q][j];
          }
        }
      }
    }
  }
}
