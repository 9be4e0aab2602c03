// expect: wrong_output
// tries: adds in half precision (_Float16) and widens the sum back to float.
// cause: relative error
#include <cstdint>

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const _Float16 x = static_cast<_Float16>(a[i]);
    const _Float16 y = static_cast<_Float16>(b[i]);
    const _Float16 sum = static_cast<_Float16>(x + y);
    c[i] = static_cast<float>(sum);
  }
}
