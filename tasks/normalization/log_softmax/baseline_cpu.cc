// PyTorch eager's CPU log_softmax is ATen's own vectorized kernel, not oneDNN (and oneDNN 2.6's
// softmax_log is off by ~1.4e-6 where the answer is 0: its log(1) is not 0). So: rows in parallel,
// each vectorized (max, exp-sum, (x - max) - log(sum)) in fp32, with an exp written so that the
// compiler can vectorize it (std::exp does not vectorize without -ffast-math).
#include <bit>
#include <cmath>
#include <cstdint>

namespace {

// exp(x) to about 1 ulp: x = n*ln2 + r with |r| <= ln2/2 (Cody-Waite), a degree-6 polynomial in r
// (Cephes' expf), then 2^n applied in two halves so that subnormal results come out right.
inline float Exp(float x) {
  x = x < -104.0f ? -104.0f : x;  // ternaries, not fmin/fmax: g++ vectorizes these
  x = x > 88.7f ? 88.7f : x;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = x * 1.44269504088896341f + shifter;
  const int32_t n = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(shifter);
  const float nf = t - shifter;
  float r = x - nf * 0.693359375f;
  r = r - nf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t n1 = n >> 1;
  const int32_t n2 = n - n1;
  return p * std::bit_cast<float>((n1 + 127) << 23) * std::bit_cast<float>((n2 + 127) << 23);
}

}  // namespace

extern "C" void log_softmax(const float* x, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (rows > 1 && rows * cols > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mx = xr[0];
#pragma omp simd reduction(max : mx)
    for (int64_t c = 0; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < cols; ++c) sum += Exp(xr[c] - mx);
    const float log_sum = std::log(sum);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - mx) - log_sum;
  }
}
