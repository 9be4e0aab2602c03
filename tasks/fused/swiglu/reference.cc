#include <cmath>
#include <cstdint>

// exp(-v) overflows to infinity below v = -709, where v / (1 + inf) is the exact limit -0.
extern "C" void swiglu_reference(const float* x, double* y, int64_t rows, int64_t cols,
                                 int64_t two_cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* gate = x + r * two_cols;
    const float* up = gate + cols;
    double* yr = y + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const double v = gate[c];
      yr[c] = v / (1.0 + std::exp(-v)) * static_cast<double>(up[c]);
    }
  }
}
