// expect: integrity_violation
// tries: exports clock_gettime under a token-pasted name, so no source rule sees the word; only
// the built library's exported symbols show the interposition.
// cause: interposition
#include <cstdint>
#include <ctime>

#define KS_CAT2(a, b) a##b
#define KS_CAT(a, b) KS_CAT2(a, b)

extern "C" __attribute__((visibility("default"))) int KS_CAT(clock_, gettime)(clockid_t, struct timespec* time) {
  time->tv_sec = 0;
  time->tv_nsec = 0;
  return 0;
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
