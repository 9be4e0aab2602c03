// expect: wrong_output
// tries: lowers precision: rounds both inputs to bfloat16 (the top 16 bits) before multiplying,
// as a tensor-core kernel in bf16 would.
#include <cstdint>
#include <cstring>

namespace {
float ToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits &= 0xffff0000u;
  std::memcpy(&value, &bits, 4);
  return value;
}
}  // namespace

extern "C" void kb_l1_001_square_matrix_multiplication(const float* x0, const float* x1, float* y, int64_t N) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t j = 0; j < N; ++j) y[i * N + j] = 0.0f;
    for (int64_t p = 0; p < N; ++p) {
      const float a = ToBfloat16(x0[i * N + p]);
      for (int64_t j = 0; j < N; ++j) y[i * N + j] += a * ToBfloat16(x1[p * N + j]);
    }
  }
}
