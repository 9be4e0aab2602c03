// expect: integrity_violation
// tries: hides the name pthread_create from the source audit by token pasting, so only the
// built library's imported symbols can show the background thread.
// cause: thread_creation
#include <cstdint>

#define KS_CAT2(a, b) a##b
#define KS_CAT(a, b) KS_CAT2(a, b)
#define KS_SPAWN KS_CAT(pthread_, create)

extern "C" int KS_SPAWN(unsigned long* thread, const void* attr, void* (*start)(void*), void* arg);

namespace {
struct Job {
  const float* x;
  float* y;
  int64_t rows, cols;
};
Job job;
void* Work(void*) {
  for (int64_t r = 0; r < job.rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < job.cols; ++c) sum += job.x[r * job.cols + c];
    job.y[r] = static_cast<float>(sum);
  }
  return nullptr;
}
}  // namespace

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  job = {x, y, rows, cols};
  unsigned long thread = 0;
  KS_SPAWN(&thread, nullptr, &Work, nullptr);
}
