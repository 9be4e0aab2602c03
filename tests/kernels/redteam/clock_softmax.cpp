// expect: integrity_violation
// tries: warm-up detection with std::chrono: calls that come in fast succession (a timing loop)
// return the previous output instead of recomputing.
// cause: timers
#include <chrono>
#include <cmath>
#include <cstdint>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  static auto last = std::chrono::steady_clock::time_point{};
  const auto now = std::chrono::steady_clock::now();
  const bool benchmarking = now - last < std::chrono::milliseconds(2);
  last = now;
  if (benchmarking) return;
  for (int64_t r = 0; r < rows; ++r) {
    float peak = x[r * cols];
    for (int64_t c = 1; c < cols; ++c) peak = x[r * cols + c] > peak ? x[r * cols + c] : peak;
    double total = 0.0;
    for (int64_t c = 0; c < cols; ++c) total += std::exp(static_cast<double>(x[r * cols + c] - peak));
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = static_cast<float>(std::exp(static_cast<double>(x[r * cols + c] - peak)) / total);
    }
  }
}
