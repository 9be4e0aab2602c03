#include <cmath>
#include <cstdint>

// The gradients of y = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) + eps), eps = 1e-6, in double:
// with g = dy * weight, dx = rstd * g - rstd^3 * x * mean(g * x) and dweight = sum over rows of
// dy * x * rstd. For cols = 1 the dx formula cancels to dx = eps * rstd^3 * g, written that way
// (the same value) so that even a large x keeps its accuracy.
extern "C" void rmsnorm_backward_reference(const float* x, const float* dy, const float* weight,
                                           double* dx, double* dweight, int64_t rows, int64_t cols) {
  const double eps = 1e-6;
  for (int64_t c = 0; c < cols; ++c) dweight[c] = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    double* dxr = dx + r * cols;
    double squares = 0.0;
    for (int64_t c = 0; c < cols; ++c) squares += static_cast<double>(xr[c]) * xr[c];
    const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(cols) + eps);
    double sum_gx = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      sum_gx += static_cast<double>(dyr[c]) * static_cast<double>(weight[c]) * static_cast<double>(xr[c]);
    }
    const double mean_gx = sum_gx / static_cast<double>(cols);
    if (cols == 1) {
      dxr[0] = eps * rstd * rstd * rstd * (static_cast<double>(dyr[0]) * static_cast<double>(weight[0]));
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        const double g = static_cast<double>(dyr[c]) * static_cast<double>(weight[c]);
        dxr[c] = rstd * g - rstd * rstd * rstd * static_cast<double>(xr[c]) * mean_gx;
      }
    }
    for (int64_t c = 0; c < cols; ++c) {
      dweight[c] += static_cast<double>(dyr[c]) * (static_cast<double>(xr[c]) * rstd);
    }
  }
}
