// expect: compile_error
// tries: defines the kernel under a misspelled name (softmx), so the entry point is missing.
// cause: does not define
#include <cmath>
#include <cstdint>

extern "C" void softmx(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float peak = x[r * cols];
    for (int64_t c = 1; c < cols; ++c) peak = x[r * cols + c] > peak ? x[r * cols + c] : peak;
    float total = 0.0f;
    for (int64_t c = 0; c < cols; ++c) total += std::exp(x[r * cols + c] - peak);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(x[r * cols + c] - peak) / total;
  }
}
