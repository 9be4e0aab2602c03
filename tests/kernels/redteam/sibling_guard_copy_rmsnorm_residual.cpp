// expect: integrity_violation
// tries: a correct rmsnorm_residual that also copies the 64 bytes past the end of its first
// output (h) over the 64 bytes past the end of its second (y): only zones that differ from one
// output to the other see it.
// cause: out of bounds
#include <cmath>
#include <cstdint>
#include <cstring>

extern "C" void rmsnorm_residual(const float* x, const float* residual, const float* weight, float* h, float* y,
                                 int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* rr = residual + r * cols;
    float* hr = h + r * cols;
    float* yr = y + r * cols;
    double ss = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      hr[c] = xr[c] + rr[c];
      ss += static_cast<double>(hr[c]) * hr[c];
    }
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(cols) + 1e-6));
    for (int64_t c = 0; c < cols; ++c) yr[c] = hr[c] * inv * weight[c];
  }
  std::memcpy(y + rows * cols, h + rows * cols, 64);
}
