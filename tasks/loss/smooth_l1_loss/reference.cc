#include <cmath>
#include <cstdint>

extern "C" void smooth_l1_loss_reference(const float* pred, const float* target, double* loss, int64_t n) {
  const double beta = 1.0;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(pred[i]) - static_cast<double>(target[i]));
    sum += d < beta ? 0.5 * d * d / beta : d - 0.5 * beta;
  }
  loss[0] = sum / static_cast<double>(n);
}
