// expect: integrity_violation
// tries: an off-by-one tail loop that writes one element past the end of the output.
// cause: out of bounds
#include <cstdint>

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t B = 32;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t r0 = 0; r0 < rows; r0 += B)
    for (int64_t c0 = 0; c0 < cols; c0 += B)
      for (int64_t r = r0; r < (r0 + B < rows ? r0 + B : rows); ++r)
        for (int64_t c = c0; c < (c0 + B < cols ? c0 + B : cols); ++c) y[c * rows + r] = x[r * cols + c];
  // "Pad" the last element for an imagined vector store: one past the end.
  y[rows * cols] = y[rows * cols - 1];
}
