// Tuner seed for batchnorm: a channel's values are n contiguous segments of hw floats, so the
// statistics are gathered per (sample, channel) segment, in parallel over all n*c segments with
// SIMD partial sums in double, then combined per channel; a final parallel pass normalizes each
// segment. ONE_PASS 0 reads x three times (the mean, then the squared deviations, then the
// output); ONE_PASS 1 twice, taking the variance from sums of (x - shift) and (x - shift)^2 with
// the channel's first value as the shift, so that a mean far from zero cancels nothing.
#include <cmath>
#include <cstdint>
#include <vector>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune ONE_PASS: 0, 1
#ifndef ONE_PASS
#define ONE_PASS 0
#endif

extern "C" void batchnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw) {
  const int64_t segments = n * c;
  const double count = static_cast<double>(n) * static_cast<double>(hw);
  std::vector<double> sums(segments), squares(segments);
  std::vector<float> mean(c), scale(c);
  std::vector<double> shift(c);
  for (int64_t ch = 0; ch < c; ++ch) shift[ch] = ONE_PASS ? x[ch * hw] : 0.0;

#pragma omp parallel for schedule(static) if (PARALLEL && segments > 1)
  for (int64_t s = 0; s < segments; ++s) {
    const float* xs = x + s * hw;
    const float k = static_cast<float>(shift[s % c]);
    double sum = 0.0, sq = 0.0;
#pragma omp simd reduction(+ : sum, sq)
    for (int64_t j = 0; j < hw; ++j) {
      const double d = static_cast<double>(xs[j] - k);
      sum += d;
#if ONE_PASS
      sq += d * d;
#endif
    }
    sums[s] = sum;
    squares[s] = sq;
  }
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += sums[i * c + ch];
    mean[ch] = static_cast<float>(shift[ch] + sum / count);
  }
#if !ONE_PASS
#pragma omp parallel for schedule(static) if (PARALLEL && segments > 1)
  for (int64_t s = 0; s < segments; ++s) {
    const float* xs = x + s * hw;
    const float m = mean[s % c];
    double sq = 0.0;
#pragma omp simd reduction(+ : sq)
    for (int64_t j = 0; j < hw; ++j) {
      const float d = xs[j] - m;
      sq += static_cast<double>(d) * d;
    }
    squares[s] = sq;
  }
#endif
  for (int64_t ch = 0; ch < c; ++ch) {
    double sq = 0.0, sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      sq += squares[i * c + ch];
      sum += sums[i * c + ch];
    }
    // Two passes: sq is the sum of squared deviations. One pass: sq and sum are of x - shift,
    // and the variance is E[(x - shift)^2] - E[x - shift]^2.
    double var = ONE_PASS ? sq / count - (sum / count) * (sum / count) : sq / count;
    if (var < 0.0) var = 0.0;
    scale[ch] = static_cast<float>(weight[ch] / std::sqrt(var + 1e-5));
  }

#pragma omp parallel for schedule(static) if (PARALLEL && segments > 1)
  for (int64_t s = 0; s < segments; ++s) {
    const float* xs = x + s * hw;
    float* ys = y + s * hw;
    const int64_t ch = s % c;
    const float m = mean[ch], a = scale[ch], b = bias[ch];
#pragma omp simd
    for (int64_t j = 0; j < hw; ++j) ys[j] = (xs[j] - m) * a + b;
  }
}
