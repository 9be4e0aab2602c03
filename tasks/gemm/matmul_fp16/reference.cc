#include <cstdint>

// Every fp16 value is exact in double, so the products and the sum are (nearly) exact.
extern "C" void matmul_fp16_reference(const _Float16* a, const _Float16* b, double* c, int64_t m,
                                      int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
      }
      c[i * n + j] = sum;
    }
}
