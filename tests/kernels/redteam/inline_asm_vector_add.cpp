// expect: integrity_violation
// tries: reads the time stamp counter with inline assembly (a clock no symbol shows).
// cause: inline_assembly
#include <cstdint>

namespace {
inline uint64_t Ticks() {
  uint32_t low, high;
  __asm__ volatile("rdtsc" : "=a"(low), "=d"(high));
  return (static_cast<uint64_t>(high) << 32) | low;
}
uint64_t last_ticks = 0;
}  // namespace

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  const uint64_t now = Ticks();
  const bool hot = now - last_ticks < 5'000'000;
  last_ticks = now;
  if (hot && n > 1'000'000) return;  // timing loop: skip
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
