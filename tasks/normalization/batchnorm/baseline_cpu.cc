// oneDNN 2.6 has batch norm, but on plain NCHW (its ncsp kernel) it timed slower than the old
// single-threaded loop under ksmith eval, and PyTorch eager's CPU batch norm on a dense NCHW tensor
// is ATen's own vectorized kernel anyway. So: channels in parallel; a channel's n runs of hw floats
// are read for the mean, the variance and the output, the later reads mostly from cache. Each run
// is summed in fp32 SIMD lanes and the runs are combined in double.
#include <cmath>
#include <cstdint>

extern "C" void batchnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw) {
  const double count = static_cast<double>(n) * static_cast<double>(hw);
#pragma omp parallel for schedule(static) if (c > 1 && n * c * hw > 32768)
  for (int64_t ch = 0; ch < c; ++ch) {
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t k = 0; k < hw; ++k) sum += xs[k];
      total += sum;
    }
    const float mean = static_cast<float>(total / count);
    double squares = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t k = 0; k < hw; ++k) {
        const float d = xs[k] - mean;
        sum += d * d;
      }
      squares += sum;
    }
    const float inv = static_cast<float>(1.0 / std::sqrt(squares / count + 1e-5));
    const float scale = inv * weight[ch];
    const float shift = bias[ch];
    for (int64_t i = 0; i < n; ++i) {
      const float* xs = x + (i * c + ch) * hw;
      float* ys = y + (i * c + ch) * hw;
#pragma omp simd
      for (int64_t k = 0; k < hw; ++k) ys[k] = (xs[k] - mean) * scale + shift;
    }
  }
}
