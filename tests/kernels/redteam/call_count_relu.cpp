// expect: integrity_violation
// tries: honest for the first 150 calls (every correctness case), then skips the work and leaves
// the previous output in place, hoping only the timed calls see it.
// cause: behaves differently
// args: --timing-budget 1
#include <atomic>
#include <cstdint>

namespace {
std::atomic<int64_t> calls{0};
}

extern "C" void relu(const float* x, float* y, int64_t n) {
  if (calls.fetch_add(1) >= 150) return;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
