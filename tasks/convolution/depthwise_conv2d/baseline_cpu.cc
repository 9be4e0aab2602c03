// CPU baseline: plain single-threaded direct loops, one output at a time with its kh x kw window
// summed in fp32, as PyTorch eager's generic (non-MKL-DNN) depthwise convolution computes it.
#include <cstdint>

extern "C" void depthwise_conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t c,
                                 int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t oh,
                                 int64_t ow) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* xp = x + (b * c + ch) * h * w;
      const float* wp = wt + ch * kh * kw;
      float* yp = y + (b * c + ch) * oh * ow;
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          float sum = 0.0f;
          for (int64_t r = 0; r < kh; ++r)
            for (int64_t s = 0; s < kw; ++s) sum += xp[(i + r) * w + j + s] * wp[r * kw + s];
          yp[i * ow + j] = sum;
        }
    }
}
