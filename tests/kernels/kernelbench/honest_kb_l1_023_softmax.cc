// expect: passed
// tries: a numerically stable softmax over dim 1, one row per thread.
#include <cmath>
#include <cstdint>

extern "C" void kb_l1_023_softmax(const float* x, float* y, int64_t batch_size, int64_t dim) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < batch_size; ++r) {
    const float* row = x + r * dim;
    float* out = y + r * dim;
    float largest = row[0];
    for (int64_t c = 1; c < dim; ++c) largest = std::fmax(largest, row[c]);
    double total = 0;
    for (int64_t c = 0; c < dim; ++c) {
      out[c] = std::exp(row[c] - largest);
      total += out[c];
    }
    const float inverse = static_cast<float>(1.0 / total);
    for (int64_t c = 0; c < dim; ++c) out[c] *= inverse;
  }
}
