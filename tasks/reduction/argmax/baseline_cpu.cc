// oneDNN has no argmax, so this is what PyTorch eager's ATen kernel amounts to: rows spread over
// all cores, each row vectorized. A compare-and-remember loop does not vectorize, so a row is
// read twice (it stays in cache): a SIMD max, then a SIMD search for the first index holding it,
// which keeps torch.argmax's lowest-index tie rule. Short rows use the plain loop, which is
// faster there.
#include <cstdint>

namespace {

int64_t RowArgmax(const float* xr, int64_t cols) {
  if (cols < 40) {
    float best = xr[0];
    int64_t index = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (xr[c] > best) {
        best = xr[c];
        index = c;
      }
    }
    return index;
  }
  float mx = xr[0];
#pragma omp simd reduction(max : mx)
  for (int64_t c = 0; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
  constexpr int64_t kBlock = 256;  // stop at the first block that holds the maximum
  for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
    const int64_t c1 = c0 + kBlock < cols ? c0 + kBlock : cols;
    int64_t first = cols;
#pragma omp simd reduction(min : first)
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t candidate = xr[c] == mx ? c : cols;
      first = candidate < first ? candidate : first;
    }
    if (first < cols) return first;
  }
  return 0;  // unreachable: the maximum is one of the row's values
}

}  // namespace

extern "C" void argmax(const float* x, int32_t* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (rows > 1 && rows * cols > 32768)
  for (int64_t r = 0; r < rows; ++r) y[r] = static_cast<int32_t>(RowArgmax(x + r * cols, cols));
}
