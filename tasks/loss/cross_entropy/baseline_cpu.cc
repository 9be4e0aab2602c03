// oneDNN has no cross-entropy loss; this is what PyTorch eager's ATen kernels amount to, fused
// per row and spread over all cores: the row max, the sum of exponentials (a Cephes-style expf
// polynomial, as PyTorch's vectorized log_softmax uses Sleef, so that the loop vectorizes), the
// log_softmax values in float times target, summed in double. Row sums are added in row order,
// so the result is the same on every run and for any thread count.
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

// exp(x) for x <= 0 to about 1 ulp; below -87 (where exp is at most 1.7e-38) it returns 0.
inline float ExpNonPositive(float x) {
  const float clamped = x < -87.0f ? -87.0f : x;
  // Round to the nearest integer by adding and removing 1.5 * 2^23 (std::floor blocks vectorizing).
  const float n = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (clamped - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return x < -87.0f ? 0.0f : p * scale;
}

double RowTerm(const float* xr, const float* tr, int64_t classes) {
  float mx = xr[0];
#pragma omp simd reduction(max : mx)
  for (int64_t c = 0; c < classes; ++c) mx = xr[c] > mx ? xr[c] : mx;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < classes; ++c) sum += ExpNonPositive(xr[c] - mx);
  const float lse = std::log(sum);
  double row = 0.0;
#pragma omp simd reduction(+ : row)
  for (int64_t c = 0; c < classes; ++c) row += static_cast<double>(tr[c] * (xr[c] - mx - lse));
  return row;
}

}  // namespace

extern "C" void cross_entropy(const float* logits, const float* target, float* loss, int64_t rows,
                              int64_t classes) {
  std::vector<double> row_terms(rows);
#pragma omp parallel for schedule(static) if (rows > 1 && rows * classes > 32768)
  for (int64_t r = 0; r < rows; ++r) row_terms[r] = RowTerm(logits + r * classes, target + r * classes, classes);
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) total += row_terms[r];
  loss[0] = static_cast<float>(-total / static_cast<double>(rows));
}
