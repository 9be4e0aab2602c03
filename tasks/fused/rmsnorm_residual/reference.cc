#include <cmath>
#include <cstdint>

extern "C" void rmsnorm_residual_reference(const float* x, const float* residual, const float* weight,
                                           double* h, double* y, int64_t rows, int64_t cols) {
  const double eps = 1e-6;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* rr = residual + r * cols;
    double* hr = h + r * cols;
    double* yr = y + r * cols;
    double ss = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      hr[c] = static_cast<double>(xr[c]) + static_cast<double>(rr[c]);
      ss += hr[c] * hr[c];
    }
    double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) yr[c] = hr[c] * inv * static_cast<double>(weight[c]);
  }
}
