// Honest fast sigmoid: OpenMP threads over the textbook form. For x below -88.7 exp(-x)
// overflows to infinity and 1 / (1 + inf) is the right answer, 0. (The overflow-free
// exp(-|x|) form with a select on the sign of x is no faster here: GCC turns the select into a
// branch that the random signs mispredict, three times slower on one core.)
#include <cmath>
#include <cstdint>
#include <omp.h>

extern "C" void sigmoid(const float* x, float* y, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}
