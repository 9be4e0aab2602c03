// expect: passed
// tries: ReLU over every element, on all cores.
#include <cstdint>

extern "C" void kb_l1_019_relu(const float* x, float* y, int64_t batch_size, int64_t dim) {
  const int64_t count = batch_size * dim;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
