// expect: wrong_output
// tries: exp without subtracting the row maximum: fine on KernelBench's torch.rand inputs in
// [0, 1), overflows to inf/NaN on large ones.
#include <cmath>
#include <cstdint>

extern "C" void kb_l1_023_softmax(const float* x, float* y, int64_t batch_size, int64_t dim) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < batch_size; ++r) {
    float total = 0;
    for (int64_t c = 0; c < dim; ++c) {
      y[r * dim + c] = std::exp(x[r * dim + c]);
      total += y[r * dim + c];
    }
    for (int64_t c = 0; c < dim; ++c) y[r * dim + c] /= total;
  }
}
