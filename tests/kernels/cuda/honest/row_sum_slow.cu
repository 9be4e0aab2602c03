// Honest slow row_sum: one thread per row, a sequential fp32 sum (as the CPU baseline does).
#include <cstdint>

#include <cuda_runtime.h>

__global__ void RowSumNaive(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
  y[r] = sum;
}

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  RowSumNaive<<<static_cast<unsigned>((rows + 63) / 64), 64, 0, stream>>>(x, y, rows, cols);
}
