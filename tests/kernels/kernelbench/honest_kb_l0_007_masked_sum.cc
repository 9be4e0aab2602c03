// expect: passed
// tries: the sum over each row of x where the mask (torch.bool in the problem, int32 0/1 here) is set.
#include <cstdint>

extern "C" void kb_l0_007_masked_sum(const float* x0, const int32_t* x1, float* y, int64_t batch_size,
                                     int64_t length) {
  for (int64_t b = 0; b < batch_size; ++b) {
    double sum = 0;
    for (int64_t i = 0; i < length; ++i) sum += x1[b * length + i] != 0 ? x0[b * length + i] : 0.0f;
    y[b] = static_cast<float>(sum);
  }
}
