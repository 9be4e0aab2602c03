// expect: wrong_output
// tries: the erf-form GELU in half precision (_Float16) widened back to float: gelu's absolute
// noise allowance (a few fp32 eps times the inputs' size) must not let half precision through.
// cause: relative error
#include <cmath>
#include <cstdint>

extern "C" void gelu(const float* x, float* y, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const _Float16 value = static_cast<_Float16>(x[i]);
    const _Float16 cdf = static_cast<_Float16>(0.5f * (1.0f + std::erf(static_cast<float>(value) * 0.70710678f)));
    y[i] = static_cast<float>(static_cast<_Float16>(value * cdf));
  }
}
