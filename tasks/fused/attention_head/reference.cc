#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void attention_head_reference(const float* q, const float* k, const float* v, double* o,
                                         int64_t s, int64_t t, int64_t d) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> p(static_cast<size_t>(t));
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t j = 0; j < t; ++j) {
      double dot = 0.0;
      for (int64_t c = 0; c < d; ++c) dot += static_cast<double>(q[i * d + c]) * k[j * d + c];
      p[j] = dot * scale;
    }
    double mx = p[0];
    for (int64_t j = 1; j < t; ++j) mx = std::fmax(mx, p[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < t; ++j) {
      p[j] = std::exp(p[j] - mx);
      sum += p[j];
    }
    for (int64_t c = 0; c < d; ++c) {
      double acc = 0.0;
      for (int64_t j = 0; j < t; ++j) acc += p[j] * v[j * d + c];
      o[i * d + c] = acc / sum;
    }
  }
}
