#include <bit>
#include <cmath>
#include <cstdint>

namespace {

// bf16 bits are the upper half of an fp32: exact in double.
double Widen(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

}  // namespace

extern "C" void softmax_bf16_reference(const uint16_t* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = x + r * cols;
    double* yr = y + r * cols;
    double mx = Widen(xr[0]);
    for (int64_t c = 1; c < cols; ++c) mx = std::fmax(mx, Widen(xr[c]));
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(Widen(xr[c]) - mx);
      sum += yr[c];
    }
    for (int64_t c = 0; c < cols; ++c) yr[c] /= sum;
  }
}
