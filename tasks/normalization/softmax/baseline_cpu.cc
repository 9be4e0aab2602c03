#include <cmath>
#include <cstdint>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mx = xr[0];
    for (int64_t c = 1; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - mx);
      sum += yr[c];
    }
    for (int64_t c = 0; c < cols; ++c) yr[c] /= sum;
  }
}
