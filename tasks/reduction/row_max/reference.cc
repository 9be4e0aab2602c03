#include <cmath>
#include <cstdint>

extern "C" void row_max_reference(const float* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double mx = xr[0];
    for (int64_t c = 1; c < cols; ++c) mx = std::fmax(mx, static_cast<double>(xr[c]));
    y[r] = mx;
  }
}
