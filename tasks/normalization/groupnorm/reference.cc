#include <cmath>
#include <cstdint>

extern "C" void groupnorm_reference(const float* x, const float* weight, const float* bias, double* y,
                                    int64_t n, int64_t c, int64_t hw, int64_t g, int64_t cpg) {
  const double eps = 1e-5;
  const int64_t length = cpg * hw;  // one group of one sample: a contiguous run of cpg*hw floats
  for (int64_t group = 0; group < n * g; ++group) {
    const float* xg = x + group * length;
    double* yg = y + group * length;
    const int64_t first_channel = (group % g) * cpg;
    double mean = 0.0;
    for (int64_t j = 0; j < length; ++j) mean += xg[j];
    mean /= static_cast<double>(length);
    double var = 0.0;
    for (int64_t j = 0; j < length; ++j) {
      const double d = xg[j] - mean;
      var += d * d;
    }
    var /= static_cast<double>(length);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < length; ++j) {
      const int64_t ch = first_channel + j / hw;
      yg[j] = (xg[j] - mean) * inv * static_cast<double>(weight[ch]) + static_cast<double>(bias[ch]);
    }
  }
  (void)c;  // c = g * cpg
}
