// CPU baseline: GELU in fp32 on bf16 data, as PyTorch eager's CPU kernel does for bf16: each x
// widened to fp32, 0.5 x (1 + erf(x / sqrt 2)) with std::erf, each y rounded once to bf16.
#include <bit>
#include <cmath>
#include <cstdint>

namespace {

float Widen(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

// Round to nearest even (the inputs are finite, so are the results).
uint16_t ToBf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace

extern "C" void gelu_bf16(const uint16_t* x, uint16_t* y, int64_t n) {
  const float inv_sqrt2 = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = Widen(x[i]);
    y[i] = ToBf16(0.5f * v * (1.0f + std::erf(v * inv_sqrt2)));
  }
}
