#include <cmath>
#include <cstdint>

extern "C" void log_softmax_reference(const float* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double* yr = y + r * cols;
    double mx = xr[0];
    for (int64_t c = 1; c < cols; ++c) mx = std::fmax(mx, static_cast<double>(xr[c]));
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(xr[c]) - mx);
    const double log_sum = std::log(sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] = (static_cast<double>(xr[c]) - mx) - log_sum;
  }
}
