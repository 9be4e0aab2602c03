// expect: wrong_output
// tries: returns its input unchanged (identity), which is relu wherever the input is positive.
// cause: exceed
#include <cstdint>
#include <cstring>

extern "C" void relu(const float* x, float* y, int64_t n) {
  std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}
