// CPU baseline: a and b widened to fp32, OpenBLAS cblas_sgemm (fp32 accumulation), the result
// rounded once to fp16.
#include <cblas.h>
#include <cstdint>
#include <vector>

extern "C" void matmul_fp16(const _Float16* a, const _Float16* b, _Float16* c, int64_t m, int64_t n,
                            int64_t k) {
  std::vector<float> af(static_cast<size_t>(m * k));
  std::vector<float> bf(static_cast<size_t>(k * n));
  std::vector<float> cf(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m * k; ++i) af[i] = static_cast<float>(a[i]);
  for (int64_t i = 0; i < k * n; ++i) bf[i] = static_cast<float>(b[i]);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, af.data(), static_cast<int>(k), bf.data(),
              static_cast<int>(n), 0.0f, cf.data(), static_cast<int>(n));
  for (int64_t i = 0; i < m * n; ++i) c[i] = static_cast<_Float16>(cf[i]);
}
