#include <cstdint>

extern "C" void argmax(const float* x, int32_t* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float best = xr[0];
    int64_t index = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (xr[c] > best) {
        best = xr[c];
        index = c;
      }
    }
    y[r] = static_cast<int32_t>(index);
  }
}
