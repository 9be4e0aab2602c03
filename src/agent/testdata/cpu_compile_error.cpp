// A kernel with two typos: an undeclared name and a missing semicolon.
#include <cstdint>

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    c[i] = a[i] + bb[i];
  }
  int unused = 3
}
