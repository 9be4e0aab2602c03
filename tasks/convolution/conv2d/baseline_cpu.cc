// CPU baseline: PyTorch's slow_conv2d path (no MKL-DNN): per batch item, im2col into a temporary
// col [cin*kh*kw, oh*ow] (col[(c*kh + r)*kw + s, i*ow + j] = x[b, c, i + r, j + s]), then one
// OpenBLAS cblas_sgemm y[b] [cout, oh*ow] = wt [cout, cin*kh*kw] @ col.
#include <cblas.h>
#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" void conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t cin, int64_t h,
                       int64_t w, int64_t cout, int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const int64_t depth = cin * kh * kw;
  const int64_t positions = oh * ow;
  std::vector<float> col(static_cast<size_t>(depth * positions));
  for (int64_t b = 0; b < n; ++b) {
    const float* xb = x + b * cin * h * w;
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t s = 0; s < kw; ++s) {
          float* dst = col.data() + ((c * kh + r) * kw + s) * positions;
          for (int64_t i = 0; i < oh; ++i) {
            const float* src = xb + (c * h + i + r) * w + s;
            for (int64_t j = 0; j < ow; ++j) dst[i * ow + j] = src[j];
          }
        }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(cout),
                static_cast<int>(positions), static_cast<int>(depth), 1.0f, wt,
                static_cast<int>(depth), col.data(), static_cast<int>(positions), 0.0f,
                y + b * cout * positions, static_cast<int>(positions));
  }
}
