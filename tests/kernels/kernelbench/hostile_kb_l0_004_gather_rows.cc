// expect: wrong_output
// tries: reads row p instead of row index[p], as if the indices were the identity.
#include <cstdint>
#include <cstring>

extern "C" void kb_l0_004_gather_rows(const float* x0, const int32_t* x1, float* y, int64_t rows, int64_t cols,
                                      int64_t picks) {
  (void)x1;
  for (int64_t p = 0; p < picks; ++p) std::memcpy(y + p * cols, x0 + (p % rows) * cols, cols * sizeof(float));
}
