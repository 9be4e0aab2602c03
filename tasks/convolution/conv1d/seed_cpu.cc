// Tuner seed for conv1d: direct convolution. The work is cut into (batch item, block of OBLOCK
// output channels, tile of TILE_T output positions) pieces handed to OpenMP threads. A piece
// keeps its OBLOCK x TILE_T outputs in a local buffer (L1/L2) while it walks every (c, q) of the
// filter: each row of x loaded (a SIMD stream over t) is multiplied into OBLOCK output rows, so
// OBLOCK 4 reads x a quarter as often.
#include <cstdint>

// @tune OBLOCK: 4, 1
#ifndef OBLOCK
#define OBLOCK 4
#endif

// @tune TILE_T: 512, 2048
#ifndef TILE_T
#define TILE_T 512
#endif

extern "C" void conv1d(const float* x, const float* w, float* y, int64_t n, int64_t cin, int64_t l,
                       int64_t cout, int64_t kw, int64_t lo) {
  const int64_t oblocks = (cout + OBLOCK - 1) / OBLOCK;
  const int64_t ttiles = (lo + TILE_T - 1) / TILE_T;
  // Below this much work, starting threads costs more than it saves.
  const bool big = n * cout * lo * cin * kw >= 100000;
#pragma omp parallel for collapse(3) schedule(dynamic) if (big)
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ob = 0; ob < oblocks; ++ob) {
      for (int64_t tt = 0; tt < ttiles; ++tt) {
        const int64_t o0 = ob * OBLOCK;
        const int64_t outs = cout - o0 < OBLOCK ? cout - o0 : OBLOCK;
        const int64_t t0 = tt * TILE_T;
        const int64_t len = lo - t0 < TILE_T ? lo - t0 : TILE_T;
        float acc[OBLOCK][TILE_T];
        for (int64_t r = 0; r < OBLOCK; ++r) {
#pragma omp simd
          for (int64_t t = 0; t < TILE_T; ++t) acc[r][t] = 0.0f;
        }
        for (int64_t c = 0; c < cin; ++c) {
          const float* xc = x + (b * cin + c) * l + t0;
          for (int64_t q = 0; q < kw; ++q) {
            const float* xs = xc + q;
            if (OBLOCK == 4 && outs == 4) {
              const float w0 = w[((o0 + 0) * cin + c) * kw + q];
              const float w1 = w[((o0 + 1) * cin + c) * kw + q];
              const float w2 = w[((o0 + 2) * cin + c) * kw + q];
              const float w3 = w[((o0 + 3) * cin + c) * kw + q];
#pragma omp simd
              for (int64_t t = 0; t < len; ++t) {
                const float v = xs[t];
                acc[0][t] += w0 * v;
                acc[1][t] += w1 * v;
                acc[2][t] += w2 * v;
                acc[3][t] += w3 * v;
              }
            } else {
              for (int64_t r = 0; r < outs; ++r) {
                const float wr = w[((o0 + r) * cin + c) * kw + q];
#pragma omp simd
                for (int64_t t = 0; t < len; ++t) acc[r][t] += wr * xs[t];
              }
            }
          }
        }
        for (int64_t r = 0; r < outs; ++r) {
          float* yr = y + (b * cout + o0 + r) * lo + t0;
#pragma omp simd
          for (int64_t t = 0; t < len; ++t) yr[t] = acc[r][t];
        }
      }
    }
  }
}
