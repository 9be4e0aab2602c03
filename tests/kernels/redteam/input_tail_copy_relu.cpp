// expect: integrity_violation
// tries: a correct relu that also copies the 64 bytes just past the end of its input into the 64
// bytes just past the end of its output, as a padded vector tail would: only zones that differ
// per buffer see it.
// cause: out of bounds
#include <cstdint>
#include <cstring>

extern "C" void relu(const float* x, float* y, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  std::memcpy(y + n, x + n, 64);
}
