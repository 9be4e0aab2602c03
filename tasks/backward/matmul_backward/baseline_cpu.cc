#include <cblas.h>
#include <cstdint>

extern "C" void matmul_backward(const float* a, const float* b, const float* dc, float* da, float* db,
                                int64_t m, int64_t n, int64_t k) {
  const int mi = static_cast<int>(m);
  const int ni = static_cast<int>(n);
  const int ki = static_cast<int>(k);
  // da [m, k] = dc [m, n] @ b^T (b is [k, n]).
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mi, ki, ni, 1.0f, dc, ni, b, ni, 0.0f, da, ki);
  // db [k, n] = a^T (a is [m, k]) @ dc [m, n].
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ki, ni, mi, 1.0f, a, ki, dc, ni, 0.0f, db, ni);
}
