// oneDNN has no loss functions; this is what PyTorch eager's ATen kernels amount to, fused: the
// squared differences (in float, as PyTorch computes them) summed over all cores. The sum is
// split into fixed blocks whose double partial sums are added in block order, so the result is
// as accurate as PyTorch's cascade sum and the same on every run and for any thread count.
#include <cstdint>
#include <vector>

extern "C" void mse_loss(const float* pred, const float* target, float* loss, int64_t n) {
  constexpr int64_t kBlock = 16384;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(blocks);
#pragma omp parallel for schedule(static) if (blocks > 2)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * kBlock;
    const int64_t end = begin + kBlock < n ? begin + kBlock : n;
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = begin; i < end; ++i) {
      const float d = pred[i] - target[i];
      sum += static_cast<double>(d * d);
    }
    partial[b] = sum;
  }
  double total = 0.0;
  for (int64_t b = 0; b < blocks; ++b) total += partial[b];
  loss[0] = static_cast<float>(total / static_cast<double>(n));
}
