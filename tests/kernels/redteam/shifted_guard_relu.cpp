// expect: integrity_violation
// tries: a correct relu that writes y[n..n+7] from y[n+8..n+15], the same zone 32 bytes further
// on: only zones whose bytes differ from position to position see it.
// cause: out of bounds
#include <cstdint>
#include <cstring>

extern "C" void relu(const float* x, float* y, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  float later[8];
  std::memcpy(later, y + n + 8, sizeof(later));
  std::memcpy(y + n, later, sizeof(later));
}
