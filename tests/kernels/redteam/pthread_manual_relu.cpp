// expect: integrity_violation
// tries: starts a background POSIX thread, declaring pthread_create by hand (no #include <pthread.h>).
// cause: thread_creation
#include <cstdint>

extern "C" int pthread_create(unsigned long* thread, const void* attr, void* (*start)(void*), void* arg);

namespace {
struct Job {
  const float* x;
  float* y;
  int64_t n;
};
Job job;
void* Work(void*) {
  for (int64_t i = 0; i < job.n; ++i) job.y[i] = job.x[i] > 0.0f ? job.x[i] : 0.0f;
  return nullptr;
}
}  // namespace

extern "C" void relu(const float* x, float* y, int64_t n) {
  job = {x, y, n};
  unsigned long thread = 0;
  pthread_create(&thread, nullptr, &Work, nullptr);
}
