#include <cmath>
#include <cstdint>

// Every fp16 value is exact in double.
extern "C" void layernorm_fp16_reference(const _Float16* x, const _Float16* weight, const _Float16* bias,
                                         double* y, int64_t rows, int64_t cols) {
  const double eps = 1e-5;
  for (int64_t r = 0; r < rows; ++r) {
    const _Float16* xr = x + r * cols;
    double* yr = y + r * cols;
    double mean = 0.0;
    for (int64_t c = 0; c < cols; ++c) mean += static_cast<double>(xr[c]);
    mean /= static_cast<double>(cols);
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      double d = static_cast<double>(xr[c]) - mean;
      var += d * d;
    }
    var /= static_cast<double>(cols);
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = (static_cast<double>(xr[c]) - mean) * inv * static_cast<double>(weight[c]) +
              static_cast<double>(bias[c]);
    }
  }
}
