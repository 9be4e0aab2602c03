#include <cmath>
#include <cstdint>

// Plain single-threaded loops over each row, as PyTorch eager would run it: the row max, the sum of
// exp(x - max) and the sum of the targets, then (p * sum(target) - target) / rows with
// p = exp(x - max) / sum. (PyTorch's autograd reaches the same value through log_softmax's
// backward, g - exp(log_softmax) * sum(g) with g = -target / rows; that form is less accurate in
// fp32: exp(x - logsumexp) carries logsumexp's rounding, about |logsumexp| * 6e-8 relative, and
// for classes = 1 it leaves a rounding error where the exact answer is 0.)
extern "C" void cross_entropy_backward(const float* logits, const float* target, float* dlogits,
                                       int64_t rows, int64_t classes) {
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    float* dr = dlogits + r * classes;
    float mx = xr[0];
    for (int64_t c = 1; c < classes; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float sum = 0.0f;
    float target_sum = 0.0f;
    for (int64_t c = 0; c < classes; ++c) {
      sum += std::exp(xr[c] - mx);
      target_sum += tr[c];
    }
    const float inv_sum = 1.0f / sum;
    for (int64_t c = 0; c < classes; ++c) {
      dr[c] = (std::exp(xr[c] - mx) * inv_sum * target_sum - tr[c]) * inv_rows;
    }
  }
}
