// oneDNN's fp16 support on the CPU depends on the CPU, and PyTorch eager's CPU layer norm for half
// is ATen's own vectorized kernel: each value widened to fp32, mean and variance in fp32, each
// output rounded once to fp16. So: rows in parallel, two-pass statistics. g++ 12 vectorizes neither
// the widening inside a reduction nor the narrowing store of _Float16, so the loops use F16C
// directly, as ATen's Vectorized<Half> does (widening is exact, narrowing rounds to nearest even).
#include <cmath>
#include <cstdint>

#include <immintrin.h>

namespace {

#ifdef __F16C__
__m256 Load8(const _Float16* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

float Sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#endif

}  // namespace

extern "C" void layernorm_fp16(const _Float16* x, const _Float16* weight, const _Float16* bias,
                               _Float16* y, int64_t rows, int64_t cols) {
  const float eps = 1e-5f;
#pragma omp parallel for schedule(static) if (rows > 1 && rows * cols > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const _Float16* xr = x + r * cols;
    _Float16* yr = y + r * cols;
    int64_t c = 0;
    float sum = 0.0f;
#ifdef __F16C__
    __m256 sum_a = _mm256_setzero_ps(), sum_b = _mm256_setzero_ps();
    for (; c + 16 <= cols; c += 16) {
      sum_a = _mm256_add_ps(sum_a, Load8(xr + c));
      sum_b = _mm256_add_ps(sum_b, Load8(xr + c + 8));
    }
    for (; c + 8 <= cols; c += 8) sum_a = _mm256_add_ps(sum_a, Load8(xr + c));
    sum = Sum8(_mm256_add_ps(sum_a, sum_b));
#endif
    for (; c < cols; ++c) sum += static_cast<float>(xr[c]);
    const float mean = sum / static_cast<float>(cols);

    c = 0;
    float var = 0.0f;
#ifdef __F16C__
    const __m256 mean_v = _mm256_set1_ps(mean);
    __m256 var_a = _mm256_setzero_ps(), var_b = _mm256_setzero_ps();
    for (; c + 16 <= cols; c += 16) {
      const __m256 da = _mm256_sub_ps(Load8(xr + c), mean_v);
      const __m256 db = _mm256_sub_ps(Load8(xr + c + 8), mean_v);
      var_a = _mm256_add_ps(var_a, _mm256_mul_ps(da, da));
      var_b = _mm256_add_ps(var_b, _mm256_mul_ps(db, db));
    }
    for (; c + 8 <= cols; c += 8) {
      const __m256 d = _mm256_sub_ps(Load8(xr + c), mean_v);
      var_a = _mm256_add_ps(var_a, _mm256_mul_ps(d, d));
    }
    var = Sum8(_mm256_add_ps(var_a, var_b));
#endif
    for (; c < cols; ++c) {
      const float d = static_cast<float>(xr[c]) - mean;
      var += d * d;
    }
    var /= static_cast<float>(cols);
    const float inv = 1.0f / std::sqrt(var + eps);

    c = 0;
#ifdef __F16C__
    const __m256 inv_v = _mm256_set1_ps(inv);
    for (; c + 8 <= cols; c += 8) {
      const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(Load8(xr + c), mean_v), inv_v), Load8(weight + c));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(yr + c),
                       _mm256_cvtps_ph(_mm256_add_ps(v, Load8(bias + c)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
#endif
    for (; c < cols; ++c) {
      yr[c] = static_cast<_Float16>((static_cast<float>(xr[c]) - mean) * inv * static_cast<float>(weight[c]) +
                                    static_cast<float>(bias[c]));
    }
  }
}
