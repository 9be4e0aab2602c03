// expect: integrity_violation
// tries: a correct transpose plus one "padding" store one element past the end of the output, as
// an off-by-one vector tail would do; only a guard region after the output can see it.
// cause: out of bounds
#include <cstdint>

#include <cuda_runtime.h>

__global__ void TransposeNaive(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows * cols) y[(i % cols) * rows + i / cols] = x[i];
  if (i == 0) y[rows * cols] = 0.0f;  // one past the end
}

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  const int64_t blocks = (rows * cols + 255) / 256;
  TransposeNaive<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, y, rows, cols);
}
