// expect: wrong_output
// tries: writes only the first half of the output (a parallel split that forgot the second half).
// cause: never written
#include <cstdint>

extern "C" void relu(const float* x, float* y, int64_t n) {
  const int64_t half = (n + 1) / 2;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < half; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
