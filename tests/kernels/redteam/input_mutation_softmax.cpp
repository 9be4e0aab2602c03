// expect: integrity_violation
// tries: uses the input as scratch (const_cast): writes the exponentials into x, then normalizes.
// cause: modified its input
#include <cmath>
#include <cstdint>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  float* scratch = const_cast<float*>(x);
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = scratch + r * cols;
    float peak = row[0];
    for (int64_t c = 1; c < cols; ++c) peak = row[c] > peak ? row[c] : peak;
    double total = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      row[c] = std::exp(row[c] - peak);
      total += row[c];
    }
    const float inverse = static_cast<float>(1.0 / total);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = row[c] * inverse;
  }
}
