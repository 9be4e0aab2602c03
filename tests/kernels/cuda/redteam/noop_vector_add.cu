// expect: wrong_output
// tries: returns without launching anything, hoping the output buffer already holds the answer.
#include <cstdint>

#include <cuda_runtime.h>

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  (void)a;
  (void)b;
  (void)c;
  (void)n;
  (void)stream;
}
