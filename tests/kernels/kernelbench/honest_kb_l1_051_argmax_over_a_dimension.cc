// expect: passed
// tries: argmax over dim 1 of [batch, dim1, dim2], the first index of the maximum, as torch.
#include <cstdint>

extern "C" void kb_l1_051_argmax_over_a_dimension(const float* x, int32_t* y, int64_t batch_size, int64_t dim1,
                                                   int64_t dim2) {
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch_size; ++b) {
    for (int64_t k = 0; k < dim2; ++k) {
      const float* column = x + b * dim1 * dim2 + k;
      int64_t best = 0;
      for (int64_t i = 1; i < dim1; ++i) {
        if (column[i * dim2] > column[best * dim2]) best = i;
      }
      y[b * dim2 + k] = static_cast<int32_t>(best);
    }
  }
}
