// What torch.nn.functional.max_pool2d costs on a CPU in PyTorch eager: it calls
// max_pool2d_with_indices, which writes the max and its index (an int64 offset into the plane) for
// every output; the indices go to a temporary kept across calls. Plain single-threaded loops,
// `val > max || isnan(val)` as PyTorch compares.
#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void maxpool2d(const float* x, float* y, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  static std::vector<int64_t> indices;
  const int64_t total = n * c * oh * ow;
  if (static_cast<int64_t>(indices.size()) < total) indices.resize(total);
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const float* xp = x + plane * h * w;
    float* yp = y + plane * oh * ow;
    int64_t* ip = indices.data() + plane * oh * ow;
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        int64_t max_index = (i * kh) * w + j * kw;
        float max_value = -INFINITY;
        for (int64_t p = i * kh; p < i * kh + kh; ++p) {
          for (int64_t q = j * kw; q < j * kw + kw; ++q) {
            const float v = xp[p * w + q];
            if (v > max_value || std::isnan(v)) {
              max_value = v;
              max_index = p * w + q;
            }
          }
        }
        yp[i * ow + j] = max_value;
        ip[i * ow + j] = max_index;
      }
    }
  }
}
