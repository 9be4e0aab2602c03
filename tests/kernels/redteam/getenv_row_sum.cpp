// expect: integrity_violation
// tries: reads the environment (e.g. a seed or an evaluator flag) with getenv.
// cause: environment
#include <cstdint>
#include <cstdlib>

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  const bool evaluating = std::getenv("KSMITH_CACHE_DIR") != nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; c += evaluating ? 1 : 1) sum += x[r * cols + c];
    y[r] = static_cast<float>(sum);
  }
}
