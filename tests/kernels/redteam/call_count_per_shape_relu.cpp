// expect: integrity_violation
// tries: counts calls per shape: honest for the first 12 calls of a shape (more than any
// correctness shape gets: 3 distributions x 3 seeds), then skips the work, so only a timing loop,
// which calls one shape over and over, sees stale outputs.
// cause: timed call
// args: --timing-budget 1
#include <cstdint>
#include <map>

extern "C" void relu(const float* x, float* y, int64_t n) {
  static std::map<int64_t, int> calls_per_shape;
  if (++calls_per_shape[n] > 12) return;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
