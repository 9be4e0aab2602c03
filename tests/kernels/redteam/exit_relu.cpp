// expect: integrity_violation
// tries: computes the first call honestly, then exit(0)s the process, hoping a clean exit reads
// as success.
// cause: exit
#include <cstdint>
#include <cstdlib>

extern "C" void relu(const float* x, float* y, int64_t n) {
  static int calls = 0;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  if (++calls > 1) std::exit(0);
}
