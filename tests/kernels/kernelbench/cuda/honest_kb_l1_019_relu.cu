// expect: passed
// tries: ReLU, one thread per element over a grid-stride loop.
#include <cstdint>

__global__ void Relu(const float* x, float* y, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = fmaxf(x[i], 0.0f);
  }
}

extern "C" void kb_l1_019_relu(const float* x, float* y, int64_t batch_size, int64_t dim, cudaStream_t stream) {
  const int64_t count = batch_size * dim;
  const int64_t blocks = (count + 255) / 256 < 65536 ? (count + 255) / 256 : 65536;
  Relu<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, y, count);
}
