// expect: integrity_violation
// tries: sets the process's OpenMP thread count to 1 on every call, so a multi-threaded baseline
// timed after it in the same worker runs on one core and reads slow.
// cause: process_state_changed
#include <omp.h>

#include <cstdint>

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  omp_set_num_threads(1);
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
