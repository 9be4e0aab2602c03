#include <cmath>
#include <cstdint>

// dlogits = (softmax(logits) * sum_c target - target) / rows, in double, with the softmax taken
// stably (the row max subtracted before exp).
extern "C" void cross_entropy_backward_reference(const float* logits, const float* target, double* dlogits,
                                                 int64_t rows, int64_t classes) {
  const double inv_rows = 1.0 / static_cast<double>(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    double* dr = dlogits + r * classes;
    double mx = xr[0];
    for (int64_t c = 1; c < classes; ++c) mx = std::fmax(mx, static_cast<double>(xr[c]));
    double sum = 0.0;
    double target_sum = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      sum += std::exp(static_cast<double>(xr[c]) - mx);
      target_sum += static_cast<double>(tr[c]);
    }
    for (int64_t c = 0; c < classes; ++c) {
      const double p = std::exp(static_cast<double>(xr[c]) - mx) / sum;
      dr[c] = (p * target_sum - static_cast<double>(tr[c])) * inv_rows;
    }
  }
}
