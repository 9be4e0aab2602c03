// expect: wrong_output
// tries: returns the constant 1/cols, the mean of every softmax row (right for cols = 1).
// cause: exceed
#include <cstdint>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  (void)x;
  const float value = 1.0f / static_cast<float>(cols);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = value;
}
