// expect: wrong_output
// tries: copies its input, as if every value were non-negative (KernelBench's torch.rand inputs).
#include <cstdint>

extern "C" void kb_l1_019_relu(const float* x, float* y, int64_t batch_size, int64_t dim, cudaStream_t stream) {
  cudaMemcpyAsync(y, x, sizeof(float) * batch_size * dim, cudaMemcpyDeviceToDevice, stream);
}
