// Tuner seed for groupnorm: each (sample, group) is a contiguous run of cpg*hw floats; the runs are
// spread over OpenMP threads. Per run: the statistics with SIMD partial sums in double, then each
// channel's segment normalized with its own weight and bias. ONE_PASS 0 reads the run three times
// (the mean, then the squared deviations, then the output); ONE_PASS 1 twice, taking the variance
// from sums of (x - shift) and (x - shift)^2 with the run's first value as the shift, so that a
// mean far from zero cancels nothing.
#include <cmath>
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune ONE_PASS: 0, 1
#ifndef ONE_PASS
#define ONE_PASS 0
#endif

extern "C" void groupnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw, int64_t g, int64_t cpg) {
  (void)c;  // c = g * cpg
  const int64_t groups = n * g;
  const int64_t length = cpg * hw;
#pragma omp parallel for schedule(static) if (PARALLEL && groups > 1)
  for (int64_t group = 0; group < groups; ++group) {
    const float* xg = x + group * length;
    float* yg = y + group * length;
    const float shift = ONE_PASS ? xg[0] : 0.0f;
    double sum = 0.0, sq = 0.0;
#pragma omp simd reduction(+ : sum, sq)
    for (int64_t e = 0; e < length; ++e) {
      const double d = static_cast<double>(xg[e] - shift);
      sum += d;
#if ONE_PASS
      sq += d * d;
#endif
    }
    const double offset = sum / static_cast<double>(length);  // mean - shift
    const float mean = static_cast<float>(shift + offset);
    double var;
#if ONE_PASS
    var = sq / static_cast<double>(length) - offset * offset;
#else
#pragma omp simd reduction(+ : sq)
    for (int64_t e = 0; e < length; ++e) {
      const float d = xg[e] - mean;
      sq += static_cast<double>(d) * d;
    }
    var = sq / static_cast<double>(length);
#endif
    if (var < 0.0) var = 0.0;
    const float inv = static_cast<float>(1.0 / std::sqrt(var + 1e-5));
    const int64_t first_channel = (group % g) * cpg;
    for (int64_t q = 0; q < cpg; ++q) {
      const float a = inv * weight[first_channel + q];
      const float b = bias[first_channel + q];
      const float* xs = xg + q * hw;
      float* ys = yg + q * hw;
#pragma omp simd
      for (int64_t k = 0; k < hw; ++k) ys[k] = (xs[k] - mean) * a + b;
    }
  }
}
