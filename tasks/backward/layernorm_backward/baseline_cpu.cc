#include <cmath>
#include <cstdint>

// Plain single-threaded loops, as PyTorch eager's CPU layer norm backward: per row the statistics
// (which its forward would have saved), the row sums of g = dy * weight and g * xhat, then dx; dweight
// and dbias accumulated row by row. For cols = 1, dx is exactly 0 (g - mean(g) with an FMA-contracted
// product would leave a rounding error); for cols = 2 the general dx formula cancels to its eps
// term, which fp32 cannot resolve that way: the closed form below is the same value.
extern "C" void layernorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                   float* dweight, float* dbias, int64_t rows, int64_t cols) {
  const float eps = 1e-5f;
  for (int64_t c = 0; c < cols; ++c) {
    dweight[c] = 0.0f;
    dbias[c] = 0.0f;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    if (cols == 2) {
      // xhat = +-half_delta * rstd exactly; through x - mean it would carry mean's rounding error,
      // which is large next to a small half_delta.
      const float half_delta = (xr[0] - xr[1]) * 0.5f;
      const float rstd = 1.0f / std::sqrt(half_delta * half_delta + eps);
      const float xhat0 = half_delta * rstd;
      dxr[0] = eps * rstd * rstd * rstd * (dyr[0] * weight[0] - dyr[1] * weight[1]) * 0.5f;
      dxr[1] = -dxr[0];
      dweight[0] += dyr[0] * xhat0;
      dweight[1] += dyr[1] * -xhat0;
      dbias[0] += dyr[0];
      dbias[1] += dyr[1];
      continue;
    }
    float mean = 0.0f;
    for (int64_t c = 0; c < cols; ++c) mean += xr[c];
    mean /= static_cast<float>(cols);
    float var = 0.0f;
    for (int64_t c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    var /= static_cast<float>(cols);
    const float rstd = 1.0f / std::sqrt(var + eps);
    float sum_g = 0.0f;
    float sum_gx = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      const float g = dyr[c] * weight[c];
      sum_g += g;
      sum_gx += g * (xr[c] - mean) * rstd;
    }
    const float mean_g = sum_g / static_cast<float>(cols);
    const float mean_gx = sum_gx / static_cast<float>(cols);
    if (cols == 1) {
      dxr[0] = 0.0f;
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        const float xhat = (xr[c] - mean) * rstd;
        dxr[c] = rstd * (dyr[c] * weight[c] - mean_g - xhat * mean_gx);
      }
    }
    for (int64_t c = 0; c < cols; ++c) {
      dweight[c] += dyr[c] * (xr[c] - mean) * rstd;
      dbias[c] += dyr[c];
    }
  }
}
