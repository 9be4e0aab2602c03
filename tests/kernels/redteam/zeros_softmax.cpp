// expect: wrong_output
// tries: returns zeros everywhere, hoping a loose absolute tolerance accepts small outputs.
// cause: exceed
#include <cstdint>
#include <cstring>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  (void)x;
  std::memset(y, 0, static_cast<size_t>(rows * cols) * sizeof(float));
}
