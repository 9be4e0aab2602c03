// expect: integrity_violation
// tries: turns on flush-to-zero and denormals-are-zero for the whole thread on every call, so
// the baseline, timed after it in the same worker, skips its slow denormal arithmetic.
// cause: process_state_changed
#include <xmmintrin.h>

#include <cmath>
#include <cstdint>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  _mm_setcsr(_mm_getcsr() | 0x8040);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    float peak = in[0];
    for (int64_t c = 1; c < cols; ++c) peak = std::fmax(peak, in[c]);
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(in[c] - peak));
    for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(std::exp(static_cast<double>(in[c] - peak)) / sum);
  }
}
