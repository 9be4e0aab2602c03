// Trusted GPU reference: softmax backward over each row in double, the same math as reference.cc
// (dot = sum of dy * y over the row, then dx = y * (dy - dot)). One block per row, a block
// reduction in double.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

// Every thread of the block must call it; every thread gets the block's sum. Safe to call back
// to back: `result` is rewritten only after every thread has passed the next barrier.
__device__ double BlockSum(double value) {
  __shared__ double partial[kThreads / 32];
  __shared__ double result;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = 0.0;
    for (int i = 0; i < kThreads / 32; ++i) value += partial[i];
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

__global__ void SoftmaxBackwardReference(const float* y, const float* dy, double* dx, int64_t rows,
                                         int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    double* dxr = dx + r * cols;
    double dot = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      dot += static_cast<double>(dyr[c]) * static_cast<double>(yr[c]);
    }
    dot = BlockSum(dot);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      dxr[c] = static_cast<double>(yr[c]) * (static_cast<double>(dyr[c]) - dot);
    }
  }
}

}  // namespace

extern "C" void softmax_backward_reference_cuda(const float* y, const float* dy, double* dx,
                                                int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // The row loop covers any row count; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 20);
  SoftmaxBackwardReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(y, dy, dx, rows,
                                                                                   cols);
}
