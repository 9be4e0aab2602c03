#include <cmath>
#include <cstdint>

// The gradients of y = layer_norm(x) * weight + bias (eps = 1e-5) in double. mean and rstd are
// recomputed from x (two-pass); xhat = (x - mean) * rstd and g = dy * weight, then
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), dweight = sum over rows of dy * xhat,
// dbias = sum over rows of dy. For cols = 2 the dx formula cancels to
// dx[0] = -dx[1] = eps * rstd^3 * (g[0] - g[1]) / 2, written that way (the same value) so that even
// a large x keeps its accuracy.
extern "C" void layernorm_backward_reference(const float* x, const float* dy, const float* weight,
                                             double* dx, double* dweight, double* dbias, int64_t rows,
                                             int64_t cols) {
  const double eps = 1e-5;
  for (int64_t c = 0; c < cols; ++c) {
    dweight[c] = 0.0;
    dbias[c] = 0.0;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    double* dxr = dx + r * cols;
    double mean = 0.0;
    for (int64_t c = 0; c < cols; ++c) mean += xr[c];
    mean /= static_cast<double>(cols);
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const double d = xr[c] - mean;
      var += d * d;
    }
    var /= static_cast<double>(cols);
    const double rstd = 1.0 / std::sqrt(var + eps);
    double sum_g = 0.0;
    double sum_gx = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const double g = static_cast<double>(dyr[c]) * static_cast<double>(weight[c]);
      sum_g += g;
      sum_gx += g * ((xr[c] - mean) * rstd);
    }
    const double mean_g = sum_g / static_cast<double>(cols);
    const double mean_gx = sum_gx / static_cast<double>(cols);
    if (cols == 2) {
      const double g0 = static_cast<double>(dyr[0]) * static_cast<double>(weight[0]);
      const double g1 = static_cast<double>(dyr[1]) * static_cast<double>(weight[1]);
      dxr[0] = eps * rstd * rstd * rstd * (g0 - g1) * 0.5;
      dxr[1] = -dxr[0];
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        const double g = static_cast<double>(dyr[c]) * static_cast<double>(weight[c]);
        const double xhat = (xr[c] - mean) * rstd;
        dxr[c] = rstd * (g - mean_g - xhat * mean_gx);
      }
    }
    for (int64_t c = 0; c < cols; ++c) {
      dweight[c] += static_cast<double>(dyr[c]) * ((xr[c] - mean) * rstd);
      dbias[c] += static_cast<double>(dyr[c]);
    }
  }
}
