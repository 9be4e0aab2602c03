// expect: integrity_violation
// tries: hands the work to a detached std::thread and returns at once, so the timer sees ~0.
// cause: thread_creation
#include <cstdint>
#include <thread>

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  std::thread([=] {
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  }).detach();
}
