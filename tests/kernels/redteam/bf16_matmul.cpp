// expect: wrong_output
// tries: rounds both inputs to bfloat16 (masks the low 16 bits) before a float accumulation,
// a precision downgrade that halves the memory traffic of a real bf16 kernel.
// cause: relative error
#include <cstdint>
#include <cstring>

namespace {
inline float ToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits &= 0xffff0000u;
  std::memcpy(&value, &bits, 4);
  return value;
}
}  // namespace

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float aip = ToBf16(a[i * k + p]);
      const float* bp = b + p * n;
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) ci[j] += aip * ToBf16(bp[j]);
    }
  }
}
