// expect: timeout
// tries: a spin-wait on a flag that nothing ever sets (a hand-rolled barrier gone wrong): the call
// never returns.
// cause: no answer
// args: --timeout-ms 1500
#include <cmath>
#include <cstdint>

namespace {
volatile int ready = 0;
}

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  while (ready == 0) {
  }
  for (int64_t r = 0; r < rows; ++r) {
    float peak = x[r * cols];
    for (int64_t c = 1; c < cols; ++c) peak = x[r * cols + c] > peak ? x[r * cols + c] : peak;
    float total = 0.0f;
    for (int64_t c = 0; c < cols; ++c) total += std::exp(x[r * cols + c] - peak);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(x[r * cols + c] - peak) / total;
  }
}
