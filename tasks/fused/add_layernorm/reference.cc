#include <cmath>
#include <cstdint>

extern "C" void add_layernorm_reference(const float* x, const float* residual, const float* weight,
                                        const float* bias, double* y, int64_t rows, int64_t cols) {
  const double eps = 1e-5;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* rr = residual + r * cols;
    double* yr = y + r * cols;
    // y holds s = x + residual (exact in double) until the last pass overwrites it.
    double mean = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = static_cast<double>(xr[c]) + static_cast<double>(rr[c]);
      mean += yr[c];
    }
    mean /= static_cast<double>(cols);
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      double d = yr[c] - mean;
      var += d * d;
    }
    var /= static_cast<double>(cols);
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c)
      yr[c] = (yr[c] - mean) * inv * static_cast<double>(weight[c]) + static_cast<double>(bias[c]);
  }
}
