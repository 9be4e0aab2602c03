// CPU baseline: the unfused sequence PyTorch eager runs for relu(conv2d(x, wt, b)) on its slow
// (non-oneDNN) path, slow_conv2d: for each image, im2col unfolds x into a [cin*kh*kw, oh*ow]
// temporary, the image's conv output is set to the broadcast bias, and OpenBLAS sgemm adds
// wt [cout, cin*kh*kw] x columns (beta = 1); then a separate single-threaded ReLU pass writes y.
#include <cblas.h>

#include <cstdint>
#include <vector>

extern "C" void conv2d_bias_relu(const float* x, const float* wt, const float* b, float* y, int64_t n,
                                 int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw,
                                 int64_t oh, int64_t ow) {
  const int64_t kk = cin * kh * kw;  // the GEMM's depth
  const int64_t pixels = oh * ow;
  std::vector<float> columns(static_cast<size_t>(kk * pixels));
  std::vector<float> z(static_cast<size_t>(n * cout * pixels));
  for (int64_t nb = 0; nb < n; ++nb) {
    const float* xb = x + nb * cin * h * w;
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx) {
          float* row = columns.data() + ((ci * kh + ky) * kw + kx) * pixels;
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) row[oy * ow + ox] = xb[(ci * h + oy + ky) * w + ox + kx];
        }
    float* zb = z.data() + nb * cout * pixels;
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t p = 0; p < pixels; ++p) zb[co * pixels + p] = b[co];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(cout), static_cast<int>(pixels),
                static_cast<int>(kk), 1.0f, wt, static_cast<int>(kk), columns.data(), static_cast<int>(pixels),
                1.0f, zb, static_cast<int>(pixels));
  }
  for (int64_t e = 0; e < n * cout * pixels; ++e) y[e] = z[e] > 0.0f ? z[e] : 0.0f;
}
