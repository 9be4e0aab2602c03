#include <cstdint>

// Non-overlapping kh x kw windows (stride = window, no padding, floor mode): oh = h / kh,
// ow = w / kw, both >= 1. Every window is full, so the divisor is kh * kw.
extern "C" void avgpool2d_reference(const float* x, double* y, int64_t n, int64_t c, int64_t h,
                                    int64_t w, int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const double count = static_cast<double>(kh * kw);
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const float* xp = x + plane * h * w;
    double* yp = y + plane * oh * ow;
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < kh; ++p) {
          for (int64_t q = 0; q < kw; ++q) sum += xp[(i * kh + p) * w + j * kw + q];
        }
        yp[i * ow + j] = sum / count;
      }
    }
  }
}
