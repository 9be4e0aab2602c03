// expect: timeout
// tries: a kernel that spins forever on a device flag nobody ever sets.
// args: --timeout-ms 1500
#include <cstdint>

#include <cuda_runtime.h>

__device__ volatile int release_flag = 0;

__global__ void Spin(float* y) {
  while (release_flag == 0) {
  }
  y[0] = 1.0f;
}

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  (void)x;
  (void)rows;
  (void)cols;
  Spin<<<1, 1, 0, stream>>>(y);
}
