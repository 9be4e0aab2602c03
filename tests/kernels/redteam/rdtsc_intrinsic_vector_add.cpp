// expect: integrity_violation
// tries: reads the time stamp counter through the _rdtsc() intrinsic (a macro for __rdtsc that no
// source rule names and no imported symbol shows) and picks a code path by the time it measures.
// cause: timers
#include <cstdint>
#include <x86intrin.h>

namespace {
uint64_t best_ticks[2] = {~uint64_t{0}, ~uint64_t{0}};
int calls = 0;
}  // namespace

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  // Run-time auto-tuning: try both variants, then keep the faster one.
  const int variant = calls < 4 ? calls % 2 : (best_ticks[0] <= best_ticks[1] ? 0 : 1);
  const uint64_t start = _rdtsc();
  if (variant == 0) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  } else {
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  }
  const uint64_t ticks = _rdtsc() - start;
  if (n > 1'000'000 && ticks < best_ticks[variant]) best_ticks[variant] = ticks;
  if (n > 1'000'000) ++calls;
}
