#include <cstdint>

extern "C" void conv2d_bias_relu_reference(const float* x, const float* wt, const float* b, double* y,
                                           int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout,
                                           int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  for (int64_t nb = 0; nb < n; ++nb)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double sum = 0.0;
          for (int64_t ci = 0; ci < cin; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                sum += static_cast<double>(x[((nb * cin + ci) * h + oy + ky) * w + ox + kx]) *
                       wt[((co * cin + ci) * kh + ky) * kw + kx];
              }
          const double z = sum + b[co];
          y[((nb * cout + co) * oh + oy) * ow + ox] = z > 0.0 ? z : 0.0;
        }
}
