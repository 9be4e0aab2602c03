// expect: integrity_violation
// tries: inline assembly spelled by token pasting (KS_CAT(__as, m__)), so the source rule never
// sees the keyword and the binary imports nothing; here it only reads the time stamp counter, but
// the same trick can issue raw system calls that neither audit sees.
// cause: rdtsc
#include <cstdint>

#define KS_CAT2(a, b) a##b
#define KS_CAT(a, b) KS_CAT2(a, b)
#define KS_ASM KS_CAT(__as, m__)

namespace {
inline uint64_t Ticks() {
  uint32_t low, high;
  KS_ASM volatile("rdtsc" : "=a"(low), "=d"(high));
  return (static_cast<uint64_t>(high) << 32) | low;
}
uint64_t last_ticks = 0;
uint64_t fastest = ~uint64_t{0};
}  // namespace

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  const uint64_t start = Ticks();
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  const uint64_t spent = Ticks() - start;
  if (spent < fastest) fastest = spent;
  last_ticks = start;
}
