#include <cmath>
#include <cstdint>

extern "C" void rmsnorm_reference(const float* x, const float* weight, double* y, int64_t rows,
                                  int64_t cols) {
  const double eps = 1e-6;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double* yr = y + r * cols;
    double ss = 0.0;
    for (int64_t c = 0; c < cols; ++c) ss += static_cast<double>(xr[c]) * xr[c];
    double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * inv * static_cast<double>(weight[c]);
  }
}
