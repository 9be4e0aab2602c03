// CPU baseline: layer norm in fp32 on fp16 data, as PyTorch eager's CPU kernel does for half:
// each value widened to fp32, two-pass mean and variance in fp32, each output rounded once to fp16.
#include <cmath>
#include <cstdint>

extern "C" void layernorm_fp16(const _Float16* x, const _Float16* weight, const _Float16* bias,
                               _Float16* y, int64_t rows, int64_t cols) {
  const float eps = 1e-5f;
  for (int64_t r = 0; r < rows; ++r) {
    const _Float16* xr = x + r * cols;
    _Float16* yr = y + r * cols;
    float mean = 0.0f;
    for (int64_t c = 0; c < cols; ++c) mean += static_cast<float>(xr[c]);
    mean /= static_cast<float>(cols);
    float var = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      const float d = static_cast<float>(xr[c]) - mean;
      var += d * d;
    }
    var /= static_cast<float>(cols);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = static_cast<_Float16>((static_cast<float>(xr[c]) - mean) * inv * static_cast<float>(weight[c]) +
                                    static_cast<float>(bias[c]));
    }
  }
}
