#include <bit>
#include <cmath>
#include <cstdint>

extern "C" void gelu_bf16_reference(const uint16_t* x, double* y, int64_t n) {
  const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
  for (int64_t i = 0; i < n; ++i) {
    // bf16 bits are the upper half of an fp32: exact in double.
    const double v = std::bit_cast<float>(static_cast<uint32_t>(x[i]) << 16);
    y[i] = 0.5 * v * (1.0 + std::erf(v * inv_sqrt2));
  }
}
