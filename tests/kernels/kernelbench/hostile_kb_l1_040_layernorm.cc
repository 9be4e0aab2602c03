// expect: wrong_output
// tries: normalizes correctly but skips the weight and bias, assuming their initial values (1
// and 0): a KernelBench check with the module's fresh parameters would not notice.
#include <cmath>
#include <cstdint>

extern "C" void kb_l1_040_layernorm(const float* x, const float* ln_weight, const float* ln_bias, float* y,
                                    int64_t batch_size, int64_t features, int64_t dim1, int64_t dim2) {
  (void)ln_weight;
  (void)ln_bias;
  const int64_t count = features * dim1 * dim2;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch_size; ++b) {
    const float* in = x + b * count;
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < count; ++i) sum += in[i];
    const double mean = sum / static_cast<double>(count);
    for (int64_t i = 0; i < count; ++i) squares += (in[i] - mean) * (in[i] - mean);
    const double inverse = 1.0 / std::sqrt(squares / static_cast<double>(count) + 1e-5);
    for (int64_t i = 0; i < count; ++i) y[b * count + i] = static_cast<float>((in[i] - mean) * inverse);
  }
}
