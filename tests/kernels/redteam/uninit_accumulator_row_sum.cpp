// expect: wrong_output
// tries: accumulates into a static scratch buffer that is never cleared between calls (fresh
// memory is zero, so the first call is right; later calls add onto stale sums).
// cause: exceed
#include <cstdint>
#include <cstdlib>

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  static double* scratch = nullptr;
  static int64_t capacity = 0;
  if (rows > capacity) {
    scratch = static_cast<double*>(std::calloc(static_cast<size_t>(rows), sizeof(double)));
    capacity = rows;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) scratch[r] += x[r * cols + c];
    y[r] = static_cast<float>(scratch[r]);
  }
}
