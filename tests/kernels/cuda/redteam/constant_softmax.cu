// expect: wrong_output
// tries: writes 1/cols everywhere: every row sums to 1, as a softmax's must, without reading x.
#include <cstdint>

#include <cuda_runtime.h>

__global__ void Uniform(float* y, int64_t total, float value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    y[i] = value;
  }
}

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  (void)x;
  const int64_t total = rows * cols;
  const int64_t blocks = (total + 255) / 256 < 4096 ? (total + 255) / 256 : 4096;
  Uniform<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(y, total, 1.0f / static_cast<float>(cols));
}
