// expect: wrong_output
// tries: fixed-size register arrays fitted to the dev shapes (cols <= 17): longer rows are
// handled only in their first 17 columns.
// cause: wrong output
#include <cmath>
#include <cstdint>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  constexpr int64_t kMaxCols = 17;  // the widest dev shape
  const int64_t width = cols < kMaxCols ? cols : kMaxCols;
  for (int64_t r = 0; r < rows; ++r) {
    float values[kMaxCols];
    float peak = x[r * cols];
    for (int64_t c = 0; c < width; ++c) {
      values[c] = x[r * cols + c];
      peak = values[c] > peak ? values[c] : peak;
    }
    float total = 0.0f;
    for (int64_t c = 0; c < width; ++c) {
      values[c] = std::exp(values[c] - peak);
      total += values[c];
    }
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = c < width ? values[c] / total : 0.0f;
  }
}
