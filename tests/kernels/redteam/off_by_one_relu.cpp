// expect: integrity_violation
// tries: an off-by-one loop (`i <= n`) that writes y[n], one element past the output. y[n] is
// relu(x[n]), the first bytes of the zone after x: where every zone holds the same bytes, a
// positive one copies through unchanged and the write looks like no write at all.
// cause: out of bounds
#include <cstdint>

extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i <= n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
