// expect: integrity_violation
// tries: a "halo" store one element before the start of the output (index -1).
// cause: before the start
#include <cstdint>

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  float previous = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    y[r - 1] = r > 0 ? previous : 0.0f;  // off by one: writes y[-1] first
    previous = static_cast<float>(sum);
  }
  y[rows - 1] = previous;
}
