#include <cmath>
#include <cstdint>

// Plain single-threaded loops, as PyTorch eager would: per row the mean of squares (rstd), the row
// sum of g * x with g = dy * weight, then dx = rstd * g - rstd^3 * x * mean(g * x); dweight
// accumulated row by row. For cols = 1 that formula cancels to its eps term, which fp32 cannot
// resolve that way: the closed form below is the same value.
extern "C" void rmsnorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                 float* dweight, int64_t rows, int64_t cols) {
  const float eps = 1e-6f;
  for (int64_t c = 0; c < cols; ++c) dweight[c] = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float squares = 0.0f;
    for (int64_t c = 0; c < cols; ++c) squares += xr[c] * xr[c];
    const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(cols) + eps);
    float sum_gx = 0.0f;
    for (int64_t c = 0; c < cols; ++c) sum_gx += dyr[c] * weight[c] * xr[c];
    const float mean_gx = sum_gx / static_cast<float>(cols);
    if (cols == 1) {
      dxr[0] = eps * rstd * rstd * rstd * (dyr[0] * weight[0]);
    } else {
      const float rstd3 = rstd * rstd * rstd;
      for (int64_t c = 0; c < cols; ++c) dxr[c] = rstd * (dyr[c] * weight[c]) - rstd3 * xr[c] * mean_gx;
    }
    for (int64_t c = 0; c < cols; ++c) dweight[c] += dyr[c] * (xr[c] * rstd);
  }
}
