#include <cmath>
#include <cstdint>

extern "C" void log_softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mx = xr[0];
    for (int64_t c = 1; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(xr[c] - mx);
    const float shift = mx + std::log(sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] - shift;
  }
}
