// CPU baseline: PyTorch's slow_conv path for conv1d (no MKL-DNN): per batch item, im2col into a
// temporary col [cin*kw, lo] (col[c*kw + q, t] = x[b, c, t + q]), then one OpenBLAS cblas_sgemm
// y[b] [cout, lo] = w [cout, cin*kw] @ col.
#include <cblas.h>
#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" void conv1d(const float* x, const float* w, float* y, int64_t n, int64_t cin, int64_t l,
                       int64_t cout, int64_t kw, int64_t lo) {
  const int64_t depth = cin * kw;
  std::vector<float> col(static_cast<size_t>(depth * lo));
  for (int64_t b = 0; b < n; ++b) {
    const float* xb = x + b * cin * l;
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t q = 0; q < kw; ++q) {
        const float* src = xb + c * l + q;
        float* dst = col.data() + (c * kw + q) * lo;
        for (int64_t t = 0; t < lo; ++t) dst[t] = src[t];
      }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(cout),
                static_cast<int>(lo), static_cast<int>(depth), 1.0f, w, static_cast<int>(depth),
                col.data(), static_cast<int>(lo), 0.0f, y + b * cout * lo, static_cast<int>(lo));
  }
}
