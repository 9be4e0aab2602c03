// CPU baseline: softmax in fp32 on bf16 data, as PyTorch eager's CPU kernel does for bf16: each
// element widened to fp32, max and exp-sum in fp32, each output rounded once to bf16.
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

float Widen(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

// Round to nearest even (the inputs are finite, so the results are finite or +inf).
uint16_t ToBf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace

extern "C" void softmax_bf16(const uint16_t* x, uint16_t* y, int64_t rows, int64_t cols) {
  std::vector<float> e(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = x + r * cols;
    uint16_t* yr = y + r * cols;
    float mx = Widen(xr[0]);
    for (int64_t c = 1; c < cols; ++c) mx = Widen(xr[c]) > mx ? Widen(xr[c]) : mx;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      e[c] = std::exp(Widen(xr[c]) - mx);
      sum += e[c];
    }
    for (int64_t c = 0; c < cols; ++c) yr[c] = ToBf16(e[c] / sum);
  }
}
