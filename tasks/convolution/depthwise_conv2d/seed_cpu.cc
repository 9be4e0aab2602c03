// Tuner seed for depthwise_conv2d: (plane, block of ROWS output rows) pieces handed to OpenMP
// threads. An output row is accumulated as kh*kw SIMD streams over j (acc[j] += wt[r, s] *
// x[i + r, j + s]), so the compiler vectorizes along the row instead of within the small window.
// SPECIAL3 1 adds a 3x3 path (the common case) whose nine weights are held in registers and whose
// window is fully unrolled, one pass over each output row.
#include <cstdint>

// @tune ROWS: 4, 1
#ifndef ROWS
#define ROWS 4
#endif

// @tune SPECIAL3: 1, 0
#ifndef SPECIAL3
#define SPECIAL3 1
#endif

extern "C" void depthwise_conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t c,
                                 int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t oh,
                                 int64_t ow) {
  const int64_t planes = n * c;
  const int64_t row_blocks = (oh + ROWS - 1) / ROWS;
  // Below this much work, starting threads costs more than it saves.
  const bool big = planes * oh * ow * kh * kw >= 100000;
#pragma omp parallel for collapse(2) schedule(static) if (big)
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t rb = 0; rb < row_blocks; ++rb) {
      const int64_t ch = plane % c;
      const float* xp = x + plane * h * w;
      const float* wp = wt + ch * kh * kw;
      float* yp = y + plane * oh * ow;
      const int64_t i1 = (rb + 1) * ROWS < oh ? (rb + 1) * ROWS : oh;
      for (int64_t i = rb * ROWS; i < i1; ++i) {
        float* yr = yp + i * ow;
#if SPECIAL3
        if (kh == 3 && kw == 3) {
          const float w00 = wp[0], w01 = wp[1], w02 = wp[2];
          const float w10 = wp[3], w11 = wp[4], w12 = wp[5];
          const float w20 = wp[6], w21 = wp[7], w22 = wp[8];
          const float* x0 = xp + i * w;
          const float* x1 = x0 + w;
          const float* x2 = x1 + w;
#pragma omp simd
          for (int64_t j = 0; j < ow; ++j) {
            yr[j] = w00 * x0[j] + w01 * x0[j + 1] + w02 * x0[j + 2] + w10 * x1[j] +
                    w11 * x1[j + 1] + w12 * x1[j + 2] + w20 * x2[j] + w21 * x2[j + 1] +
                    w22 * x2[j + 2];
          }
          continue;
        }
#endif
#pragma omp simd
        for (int64_t j = 0; j < ow; ++j) yr[j] = 0.0f;
        for (int64_t r = 0; r < kh; ++r) {
          const float* xr = xp + (i + r) * w;
          for (int64_t s = 0; s < kw; ++s) {
            const float ws = wp[r * kw + s];
            const float* xs = xr + s;
#pragma omp simd
            for (int64_t j = 0; j < ow; ++j) yr[j] += ws * xs[j];
          }
        }
      }
    }
  }
}
