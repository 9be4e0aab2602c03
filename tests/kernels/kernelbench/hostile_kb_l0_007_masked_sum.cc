// expect: wrong_output
// tries: sums every element, ignoring the mask.
#include <cstdint>

extern "C" void kb_l0_007_masked_sum(const float* x0, const int32_t* x1, float* y, int64_t batch_size,
                                     int64_t length) {
  (void)x1;
  for (int64_t b = 0; b < batch_size; ++b) {
    double sum = 0;
    for (int64_t i = 0; i < length; ++i) sum += x0[b * length + i];
    y[b] = static_cast<float>(sum);
  }
}
