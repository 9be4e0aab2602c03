// expect: integrity_violation
// tries: #include_next with an absolute path: the include rules match `#include` followed by
// '"' or '<', not `#include_next`, and the compiler prints the included file into the build log.
// cause: include
#include <cstdint>
#include_next "/etc/hostname"

extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
