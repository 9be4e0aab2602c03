// expect: wrong_output
// tries: a no-op kernel that returns at once and writes nothing, hoping stale memory passes.
// cause: never written
#include <cstdint>

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  (void)a;
  (void)b;
  (void)c;
  (void)n;
}
