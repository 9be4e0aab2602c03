// expect: compile_error
// tries: defines the CPU signature, without the trailing `cudaStream_t stream`.
// cause: cudaStream_t stream
#include <cstdint>

#include <cuda_runtime.h>

__global__ void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * cols;
  float mx = xr[0];
  for (int64_t c = 1; c < cols; ++c) mx = fmaxf(mx, xr[c]);
  float sum = 0.0f;
  for (int64_t c = 0; c < cols; ++c) sum += expf(xr[c] - mx);
  for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = expf(xr[c] - mx) / sum;
}

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  SoftmaxRows<<<static_cast<unsigned>((rows + 63) / 64), 64>>>(x, y, rows, cols);
}
