// expect: integrity_violation
// tries: calls the Fortran BLAS sgemm_ declared by hand (no BLAS header for the source audit);
// candidates are linked without BLAS and with --no-undefined, so it cannot link, and the link
// log's unresolved sgemm_ is audited like an import.
// cause: sgemm_
#include <cstdint>

extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const float* alpha, const float* a, const int* lda,
                       const float* b, const int* ldb, const float* beta, float* c, const int* ldc);

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  // Row-major C = A B is column-major C^T = B^T A^T.
  const int M = static_cast<int>(n), N = static_cast<int>(m), K = static_cast<int>(k);
  const float one = 1.0f, zero = 0.0f;
  sgemm_("N", "N", &M, &N, &K, &one, b, &M, a, &K, &zero, c, &M);
}
