// expect: integrity_violation
// tries: exports its own clock_gettime, which always reports the same instant, to fool a timer.
// cause: clock_gettime
#include <cstdint>
#include <ctime>

extern "C" __attribute__((visibility("default"))) int clock_gettime(clockid_t, struct timespec* time) {
  time->tv_sec = 0;
  time->tv_nsec = 0;
  return 0;
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
