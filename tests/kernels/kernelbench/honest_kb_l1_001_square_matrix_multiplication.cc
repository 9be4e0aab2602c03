// expect: passed
// tries: C = A B in fp32, blocked over rows and the inner dimension, rows across threads.
#include <cstdint>

extern "C" void kb_l1_001_square_matrix_multiplication(const float* x0, const float* x1, float* y, int64_t N) {
  constexpr int64_t kBlock = 64;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    float* row = y + i * N;
    for (int64_t j = 0; j < N; ++j) row[j] = 0.0f;
    for (int64_t p0 = 0; p0 < N; p0 += kBlock) {
      const int64_t p1 = p0 + kBlock < N ? p0 + kBlock : N;
      for (int64_t p = p0; p < p1; ++p) {
        const float a = x0[i * N + p];
        const float* b = x1 + p * N;
#pragma omp simd
        for (int64_t j = 0; j < N; ++j) row[j] += a * b[j];
      }
    }
  }
}
