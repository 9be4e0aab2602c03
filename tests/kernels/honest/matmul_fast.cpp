// Honest fast matmul: c is split into MB x NB tiles handed to OpenMP threads; each tile is
// computed i-k-j over KB-deep slices of k, so the inner loop is a contiguous SIMD axpy on a row of c.
#include <cstdint>
#include <omp.h>

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  const int64_t MB = 32, NB = 256, KB = 256;
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t i0 = 0; i0 < m; i0 += MB)
    for (int64_t j0 = 0; j0 < n; j0 += NB) {
      const int64_t i1 = i0 + MB < m ? i0 + MB : m;
      const int64_t j1 = j0 + NB < n ? j0 + NB : n;
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) c[i * n + j] = 0.0f;
      for (int64_t p0 = 0; p0 < k; p0 += KB) {
        const int64_t p1 = p0 + KB < k ? p0 + KB : k;
        for (int64_t i = i0; i < i1; ++i) {
          float* ci = c + i * n;
          for (int64_t p = p0; p < p1; ++p) {
            const float aip = a[i * k + p];
            const float* bp = b + p * n;
#pragma omp simd
            for (int64_t j = j0; j < j1; ++j) ci[j] += aip * bp[j];
          }
        }
      }
    }
}
