// expect: passed
// tries: layer norm over the last three axes (features, dim1, dim2) with the module's weight
// and bias, eps 1e-5, two passes in double per sample.
#include <cmath>
#include <cstdint>

extern "C" void kb_l1_040_layernorm(const float* x, const float* ln_weight, const float* ln_bias, float* y,
                                    int64_t batch_size, int64_t features, int64_t dim1, int64_t dim2) {
  const int64_t count = features * dim1 * dim2;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch_size; ++b) {
    const float* in = x + b * count;
    float* out = y + b * count;
    double sum = 0;
    for (int64_t i = 0; i < count; ++i) sum += in[i];
    const double mean = sum / static_cast<double>(count);
    double squares = 0;
    for (int64_t i = 0; i < count; ++i) squares += (in[i] - mean) * (in[i] - mean);
    const double inverse = 1.0 / std::sqrt(squares / static_cast<double>(count) + 1e-5);
    for (int64_t i = 0; i < count; ++i) {
      out[i] = static_cast<float>((in[i] - mean) * inverse * ln_weight[i] + ln_bias[i]);
    }
  }
}
