#include <cstdint>

// Non-overlapping kh x kw windows (stride = window, no padding, floor mode): oh = h / kh,
// ow = w / kw, both >= 1. The max of floats is exact, so double only carries it.
extern "C" void maxpool2d_reference(const float* x, double* y, int64_t n, int64_t c, int64_t h,
                                    int64_t w, int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const float* xp = x + plane * h * w;
    double* yp = y + plane * oh * ow;
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double best = xp[(i * kh) * w + j * kw];
        for (int64_t p = 0; p < kh; ++p) {
          for (int64_t q = 0; q < kw; ++q) {
            const double v = xp[(i * kh + p) * w + j * kw + q];
            if (v > best) best = v;
          }
        }
        yp[i * ow + j] = best;
      }
    }
  }
}
