#include <cmath>
#include <cstdint>

extern "C" void softmax_backward_reference(const float* y, const float* dy, double* dx, int64_t rows,
                                           int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    double* dxr = dx + r * cols;
    double dot = 0.0;
    for (int64_t c = 0; c < cols; ++c) dot += static_cast<double>(dyr[c]) * static_cast<double>(yr[c]);
    for (int64_t c = 0; c < cols; ++c) {
      dxr[c] = static_cast<double>(yr[c]) * (static_cast<double>(dyr[c]) - dot);
    }
  }
}
