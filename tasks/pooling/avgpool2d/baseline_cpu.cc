// What torch.nn.functional.avg_pool2d costs on a CPU in PyTorch eager (cpu_avg_pool): per output,
// an fp32 sum over the window divided by the window size (count_include_pad; no padding here, so
// kh * kw). Plain single-threaded loops.
#include <cstdint>

extern "C" void avgpool2d(const float* x, float* y, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const int64_t divide_factor = kh * kw;
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const float* xp = x + plane * h * w;
    float* yp = y + plane * oh * ow;
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float sum = 0.0f;
        for (int64_t p = i * kh; p < i * kh + kh; ++p) {
          for (int64_t q = j * kw; q < j * kw + kw; ++q) sum += xp[p * w + q];
        }
        yp[i * ow + j] = sum / static_cast<float>(divide_factor);
      }
    }
  }
}
