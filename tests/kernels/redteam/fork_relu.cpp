// expect: integrity_violation
// tries: forks a child to do half of the work (a process instead of a thread).
// cause: process_creation
#include <cstdint>
#include <unistd.h>

extern "C" void relu(const float* x, float* y, int64_t n) {
  const pid_t child = fork();
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  if (child == 0) _exit(0);
}
