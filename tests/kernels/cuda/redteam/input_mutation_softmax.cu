// expect: integrity_violation
// tries: uses the input as scratch (const_cast): writes exp(x - max) into x, then normalizes into
// y. The output is right; the input is not the caller's any more.
// cause: modified its input
#include <cstdint>

#include <cuda_runtime.h>

__global__ void SoftmaxInPlaceScratch(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float* scratch = const_cast<float*>(x) + r * cols;
  float mx = scratch[0];
  for (int64_t c = 1; c < cols; ++c) mx = fmaxf(mx, scratch[c]);
  float sum = 0.0f;
  for (int64_t c = 0; c < cols; ++c) {
    scratch[c] = expf(scratch[c] - mx);
    sum += scratch[c];
  }
  for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = scratch[c] / sum;
}

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  SoftmaxInPlaceScratch<<<static_cast<unsigned>((rows + 63) / 64), 64, 0, stream>>>(x, y, rows, cols);
}
