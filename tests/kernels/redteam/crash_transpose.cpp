// expect: runtime_error
// tries: writes through a scratch pointer that was never allocated (null) on large inputs.
// cause: SIGSEGV
#include <cstdint>

namespace {
float* volatile scratch = nullptr;  // "allocated lazily" - never
}

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows * cols > 4096) scratch[0] = x[0];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * cols + c];
}
