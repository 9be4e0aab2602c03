#include <cmath>
#include <cstdint>

// da = dc @ b^T and db = a^T @ dc, every product and sum in double. db is summed over i in order,
// with i as the outer loop so that its rows are walked contiguously.
extern "C" void matmul_backward_reference(const float* a, const float* b, const float* dc, double* da,
                                          double* db, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) sum += static_cast<double>(dc[i * n + j]) * b[p * n + j];
      da[i * k + p] = sum;
    }
  }
  for (int64_t e = 0; e < k * n; ++e) db[e] = 0.0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const double aip = a[i * k + p];
      double* dbp = db + p * n;
      const float* dci = dc + i * n;
      for (int64_t j = 0; j < n; ++j) dbp[j] += aip * dci[j];
    }
  }
}
