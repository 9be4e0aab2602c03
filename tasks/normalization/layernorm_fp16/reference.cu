// Trusted GPU reference: layer norm over each row in double from the exact fp16 values, the same
// math as reference.cc (two-pass mean and variance, eps = 1e-5). One block per row, block
// reductions in double.
#include <algorithm>
#include <cstdint>

#include <cuda_fp16.h>
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

__device__ double Widen(__half v) { return static_cast<double>(__half2float(v)); }

__global__ void LayernormFp16Reference(const __half* x, const __half* weight, const __half* bias,
                                       double* y, int64_t rows, int64_t cols) {
  const double eps = 1e-5;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const __half* xr = x + r * cols;
    double* yr = y + r * cols;
    double sum = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += Widen(xr[c]);
    const double mean = BlockSum(sum) / static_cast<double>(cols);
    double squares = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double d = Widen(xr[c]) - mean;
      squares += d * d;
    }
    const double var = BlockSum(squares) / static_cast<double>(cols);
    const double inv = 1.0 / sqrt(var + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      yr[c] = (Widen(xr[c]) - mean) * inv * Widen(weight[c]) + Widen(bias[c]);
    }
  }
}

}  // namespace

extern "C" void layernorm_fp16_reference_cuda(const __half* x, const __half* weight, const __half* bias,
                                              double* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // The row loop covers any row count; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 20);
  LayernormFp16Reference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, weight, bias, y,
                                                                                 rows, cols);
}
