#include <cmath>
#include <cstdint>

extern "C" void scaled_causal_softmax_reference(const float* x, double* y, int64_t heads, int64_t s) {
  const double scale = 0.125;
  for (int64_t row = 0; row < heads * s; ++row) {
    const int64_t i = row % s;  // the query; keys 0..i are unmasked
    const float* xr = x + row * s;
    double* yr = y + row * s;
    double mx = scale * xr[0];
    for (int64_t j = 1; j <= i; ++j) mx = std::fmax(mx, scale * xr[j]);
    double sum = 0.0;
    for (int64_t j = 0; j <= i; ++j) {
      yr[j] = std::exp(scale * xr[j] - mx);
      sum += yr[j];
    }
    for (int64_t j = 0; j <= i; ++j) yr[j] /= sum;
    for (int64_t j = i + 1; j < s; ++j) yr[j] = 0.0;
  }
}
