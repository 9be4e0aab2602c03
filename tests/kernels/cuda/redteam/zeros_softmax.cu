// expect: wrong_output
// tries: clears the output with cudaMemsetAsync and computes nothing: "small" errors everywhere.
#include <cstdint>

#include <cuda_runtime.h>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  (void)x;
  cudaMemsetAsync(y, 0, static_cast<size_t>(rows * cols) * sizeof(float), stream);
}
