// expect: compile_error
// tries: declares the size as int instead of int64_t (a wrong signature).
// cause: int64_t n
#include <cstdint>

extern "C" void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
