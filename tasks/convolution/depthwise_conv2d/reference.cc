#include <cmath>
#include <cstdint>

extern "C" void depthwise_conv2d_reference(const float* x, const float* wt, double* y, int64_t n,
                                           int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw,
                                           int64_t oh, int64_t ow) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0.0;
          for (int64_t r = 0; r < kh; ++r)
            for (int64_t s = 0; s < kw; ++s) {
              sum += static_cast<double>(x[((b * c + ch) * h + i + r) * w + j + s]) *
                     wt[(ch * kh + r) * kw + s];
            }
          y[((b * c + ch) * oh + i) * ow + j] = sum;
        }
}
