#include <cmath>
#include <cstdint>

extern "C" void layernorm_reference(const float* x, const float* gamma, const float* beta, double* y,
                                    int64_t rows, int64_t cols) {
  const double eps = 1e-5;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double* yr = y + r * cols;
    double mean = 0.0;
    for (int64_t c = 0; c < cols; ++c) mean += xr[c];
    mean /= static_cast<double>(cols);
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      double d = xr[c] - mean;
      var += d * d;
    }
    var /= static_cast<double>(cols);
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c)
      yr[c] = (xr[c] - mean) * inv * static_cast<double>(gamma[c]) + static_cast<double>(beta[c]);
  }
}
