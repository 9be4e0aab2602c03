#include <cstdint>

extern "C" void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows,
                                 int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float dot = 0.0f;
    for (int64_t c = 0; c < cols; ++c) dot += dyr[c] * yr[c];
    for (int64_t c = 0; c < cols; ++c) dxr[c] = yr[c] * (dyr[c] - dot);
  }
}
