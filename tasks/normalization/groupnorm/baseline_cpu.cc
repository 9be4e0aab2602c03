// oneDNN 2.6 has no group norm (it came in 3.3), and PyTorch eager's CPU group norm is ATen's own
// vectorized kernel, parallel over (sample, group). So: groups in parallel, each a contiguous run
// of cpg*hw floats normalized while still in cache, two-pass fp32 statistics.
#include <cmath>
#include <cstdint>

extern "C" void groupnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw, int64_t g, int64_t cpg) {
  const float eps = 1e-5f;
  const int64_t length = cpg * hw;
#pragma omp parallel for schedule(static) if (n * g > 1 && n * c * hw > 32768)
  for (int64_t group = 0; group < n * g; ++group) {
    const float* xg = x + group * length;
    float* yg = y + group * length;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t e = 0; e < length; ++e) sum += xg[e];
    const float mean = sum / static_cast<float>(length);
    float var = 0.0f;
#pragma omp simd reduction(+ : var)
    for (int64_t e = 0; e < length; ++e) {
      const float d = xg[e] - mean;
      var += d * d;
    }
    var /= static_cast<float>(length);
    const float inv = 1.0f / std::sqrt(var + eps);
    const int64_t first_channel = (group % g) * cpg;
    for (int64_t q = 0; q < cpg; ++q) {
      const float scale = inv * weight[first_channel + q];
      const float shift = bias[first_channel + q];
      const float* xs = xg + q * hw;
      float* ys = yg + q * hw;
#pragma omp simd
      for (int64_t k = 0; k < hw; ++k) ys[k] = (xs[k] - mean) * scale + shift;
    }
  }
}
