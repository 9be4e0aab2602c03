#include <cstdint>

// The first index of the row maximum (strict > never moves to a later equal value), written as a
// double (the comparison is exact).
extern "C" void argmax_reference(const float* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double best = xr[0];
    int64_t index = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (static_cast<double>(xr[c]) > best) {
        best = xr[c];
        index = c;
      }
    }
    y[r] = static_cast<double>(index);
  }
}
