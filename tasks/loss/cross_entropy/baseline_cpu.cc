// What `F.cross_entropy(logits, target)` with probability targets costs in PyTorch eager on a
// CPU, single-threaded: log_softmax into a temporary, its product with target into another, the
// sum of that, negated and divided by rows. PyTorch sums with a cascade that stays accurate over
// millions of terms; a plain float accumulator would not, so the sum is kept in double, which
// costs the same (one dependent add per element either way).
#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void cross_entropy(const float* logits, const float* target, float* loss, int64_t rows,
                              int64_t classes) {
  const int64_t count = rows * classes;
  std::vector<float> log_softmax(count);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = logits + r * classes;
    float* lr = log_softmax.data() + r * classes;
    float mx = xr[0];
    for (int64_t c = 1; c < classes; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float sum = 0.0f;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(xr[c] - mx);
    const float lse = std::log(sum);
    for (int64_t c = 0; c < classes; ++c) lr[c] = xr[c] - mx - lse;
  }
  std::vector<float> product(count);
  for (int64_t i = 0; i < count; ++i) product[i] = log_softmax[i] * target[i];
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += product[i];
  const float total = static_cast<float>(sum);
  loss[0] = -total / static_cast<float>(rows);
}
