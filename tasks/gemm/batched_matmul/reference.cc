#include <cmath>
#include <cstdint>

extern "C" void batched_matmul_reference(const float* a, const float* b, double* c, int64_t batch,
                                         int64_t m, int64_t n, int64_t k) {
  for (int64_t s = 0; s < batch; ++s) {
    const float* as = a + s * m * k;
    const float* bs = b + s * k * n;
    double* cs = c + s * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(as[i * k + p]) * bs[p * n + j];
        cs[i * n + j] = sum;
      }
  }
}
