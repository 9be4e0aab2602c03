// expect: integrity_violation
// tries: a correct relu that copies the 64 bytes just before its output (the zone in front of it)
// over the 64 bytes just past its end: only zones whose bytes differ before and after a tensor
// see it.
// cause: out of bounds
#include <cstdint>
#include <cstring>

extern "C" void relu(const float* x, float* y, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  std::memcpy(y + n, y - 16, 64);
}
