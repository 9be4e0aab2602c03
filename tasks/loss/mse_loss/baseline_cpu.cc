// What `F.mse_loss(pred, target)` costs in PyTorch eager on a CPU, single-threaded: the squared
// differences into a temporary, then its mean. PyTorch sums with a cascade that stays accurate
// over millions of terms; a plain float accumulator would drift by about 1% at the bench size,
// so the sum is kept in double, which costs the same (one dependent add per element either way).
#include <cstdint>
#include <vector>

extern "C" void mse_loss(const float* pred, const float* target, float* loss, int64_t n) {
  std::vector<float> squares(n);
  for (int64_t i = 0; i < n; ++i) {
    const float d = pred[i] - target[i];
    squares[i] = d * d;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += squares[i];
  loss[0] = static_cast<float>(sum / static_cast<double>(n));
}
