// oneDNN has no cross-entropy backward, so this is a vectorized OpenMP loop over rows on all cores,
// as PyTorch eager's ATen kernels (Sleef's vector exp there, a Cephes-style polynomial here).
// p is formed as exp(x - max) / sum rather than through log_softmax's backward, which in fp32
// carries logsumexp's rounding and leaves a rounding error where classes = 1 needs an exact 0.
#include <bit>
#include <cstdint>

namespace {

// exp(v) for v <= 0, about 1 ulp; exactly 1 at 0; reaches the subnormals and 0 below -104.
#pragma omp declare simd notinbranch
inline float ExpNonPositive(float v) {
  const float x = v < -104.0f ? -104.0f : v;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;             // ln 2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  // 2^n in two factors, so that n down to -150 still scales correctly into the subnormals.
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni / 2;
  const int32_t n2 = ni - n1;
  return e * std::bit_cast<float>((n1 + 127) << 23) * std::bit_cast<float>((n2 + 127) << 23);
}

}  // namespace

extern "C" void cross_entropy_backward(const float* logits, const float* target, float* dlogits,
                                       int64_t rows, int64_t classes) {
  const float inv_rows = 1.0f / static_cast<float>(rows);
#pragma omp parallel for schedule(static) if (rows > 1 && rows * classes > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    float* dr = dlogits + r * classes;
    float mx = xr[0];
#pragma omp simd reduction(max : mx)
    for (int64_t c = 0; c < classes; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float sum = 0.0f;
    float target_sum = 0.0f;
#pragma omp simd reduction(+ : sum, target_sum)
    for (int64_t c = 0; c < classes; ++c) {
      const float e = ExpNonPositive(xr[c] - mx);
      dr[c] = e;
      sum += e;
      target_sum += tr[c];
    }
    const float inv_sum = 1.0f / sum;
#pragma omp simd
    for (int64_t c = 0; c < classes; ++c) dr[c] = (dr[c] * inv_sum * target_sum - tr[c]) * inv_rows;
  }
}
