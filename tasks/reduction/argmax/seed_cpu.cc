// Tuner seed for argmax: rows spread over OpenMP threads. TWO_PASS 1 finds the row maximum with a
// SIMD max reduction, then the first index holding it with a SIMD min-index reduction over
// blocks of 256 columns that stops at the first block containing it (the row is still in cache);
// both loops vectorize, which a compare-and-remember loop does not. TWO_PASS 0 is the plain
// single pass with strict > (the first maximum wins).
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune TWO_PASS: 0, 1
#ifndef TWO_PASS
#define TWO_PASS 1
#endif

namespace {

constexpr int64_t kBlock = 256;

int64_t RowArgmax(const float* xr, int64_t cols) {
#if TWO_PASS
  float mx = xr[0];
#pragma omp simd reduction(max : mx)
  for (int64_t c = 0; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
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
  return 0;  // unreachable: the maximum is an element of the row
#else
  float best = xr[0];
  int64_t index = 0;
  for (int64_t c = 1; c < cols; ++c) {
    if (xr[c] > best) {
      best = xr[c];
      index = c;
    }
  }
  return index;
#endif
}

}  // namespace

extern "C" void argmax(const float* x, int32_t* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) y[r] = static_cast<int32_t>(RowArgmax(x + r * cols, cols));
}
