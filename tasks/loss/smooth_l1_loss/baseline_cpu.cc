// What `F.smooth_l1_loss(pred, target)` costs in PyTorch eager on a CPU, single-threaded: the
// elementwise losses into a temporary, then their mean. PyTorch sums with a cascade that stays
// accurate over millions of terms; a plain float accumulator would drift at the bench size, so
// the sum is kept in double, which costs the same (one dependent add per element either way).
#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void smooth_l1_loss(const float* pred, const float* target, float* loss, int64_t n) {
  const float beta = 1.0f;
  std::vector<float> losses(n);
  for (int64_t i = 0; i < n; ++i) {
    const float z = std::fabs(pred[i] - target[i]);
    losses[i] = z < beta ? 0.5f * z * z / beta : z - 0.5f * beta;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += losses[i];
  loss[0] = static_cast<float>(sum / static_cast<double>(n));
}
