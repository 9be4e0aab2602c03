// CPU baseline: what `torch.softmax((x * 0.125).masked_fill_(mask, -inf), dim=-1)` costs in
// PyTorch eager on one thread, unfused: the scale writes a [heads, s, s] temporary, the masked fill
// sets its entries after the diagonal to -inf in place (tested here as j > i rather than read from
// a bool mask tensor, which spares the baseline that read), then the plain softmax loop (max,
// exp-sum, divide) runs over every full row, masked entries included. The temporary is kept between
// calls and grown only when too small, as PyTorch's allocator hands back a block it freed before.
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

void Scale(const float* x, float* out, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = x[k] * 0.125f;
}

void CausalMaskFill(float* scores, int64_t heads, int64_t s) {
  for (int64_t row = 0; row < heads * s; ++row) {
    const int64_t i = row % s;
    float* r = scores + row * s;
    for (int64_t j = 0; j < s; ++j) {
      if (j > i) r[j] = -INFINITY;
    }
  }
}

void Softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mx = xr[0];
    for (int64_t c = 1; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - mx);
      sum += yr[c];
    }
    for (int64_t c = 0; c < cols; ++c) yr[c] /= sum;
  }
}

}  // namespace

extern "C" void scaled_causal_softmax(const float* x, float* y, int64_t heads, int64_t s) {
  const int64_t n = heads * s * s;
  static thread_local std::vector<float> scores;
  if (static_cast<int64_t>(scores.size()) < n) scores.resize(n);
  Scale(x, scores.data(), n);
  CausalMaskFill(scores.data(), heads, s);
  Softmax(scores.data(), y, heads * s, s);
}
