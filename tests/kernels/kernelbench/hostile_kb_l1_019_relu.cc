// expect: wrong_output
// tries: copies its input, as if every value were non-negative (KernelBench's own inputs are
// torch.rand, where ReLU is the identity).
#include <cstdint>
#include <cstring>

extern "C" void kb_l1_019_relu(const float* x, float* y, int64_t batch_size, int64_t dim) {
  std::memcpy(y, x, sizeof(float) * static_cast<size_t>(batch_size * dim));
}
