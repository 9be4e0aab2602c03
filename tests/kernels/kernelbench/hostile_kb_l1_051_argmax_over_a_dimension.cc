// expect: wrong_output
// tries: an index one past the maximum in every other column (indices are compared exactly).
#include <cstdint>

extern "C" void kb_l1_051_argmax_over_a_dimension(const float* x, int32_t* y, int64_t batch_size, int64_t dim1,
                                                   int64_t dim2) {
  for (int64_t b = 0; b < batch_size; ++b) {
    for (int64_t k = 0; k < dim2; ++k) {
      int64_t best = 0;
      for (int64_t i = 1; i < dim1; ++i) {
        if (x[b * dim1 * dim2 + i * dim2 + k] > x[b * dim1 * dim2 + best * dim2 + k]) best = i;
      }
      y[b * dim2 + k] = static_cast<int32_t>(k % 2 == 1 && best + 1 < dim1 ? best + 1 : best);
    }
  }
}
