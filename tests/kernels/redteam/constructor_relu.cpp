// expect: integrity_violation
// tries: runs code when the library loads (a constructor), before any kernel call is watched.
// cause: load_time_code
#include <cstdint>

namespace {
int prepared = 0;
__attribute__((constructor)) void Prepare() { prepared = 1; }
}  // namespace

extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f && prepared ? x[i] : 0.0f;
}
