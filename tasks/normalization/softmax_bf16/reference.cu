// Trusted GPU reference: softmax over each row in double from the exact bf16 values, the same
// math as reference.cc (row max, sum of exp(x - max), divide). One block per row, block
// reductions in double.
#include <algorithm>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

// Every thread of the block must call it; every thread gets the block's result. Safe to call
// back to back: `result` is rewritten only after every thread has passed the next barrier.
template <typename Op>
__device__ double BlockReduce(double value, Op op) {
  __shared__ double partial[kThreads / 32];
  __shared__ double result;
  for (int offset = 16; offset > 0; offset /= 2) {
    value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  }
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = partial[0];
    for (int i = 1; i < kThreads / 32; ++i) value = op(value, partial[i]);
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

struct Max {
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};
struct Sum {
  __device__ double operator()(double a, double b) const { return a + b; }
};

__device__ double Widen(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

__global__ void SoftmaxBf16Reference(const __nv_bfloat16* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const __nv_bfloat16* xr = x + r * cols;
    double* yr = y + r * cols;
    double mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) mx = fmax(mx, Widen(xr[c]));
    mx = BlockReduce(mx, Max{});
    double sum = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double e = exp(Widen(xr[c]) - mx);
      yr[c] = e;
      sum += e;
    }
    sum = BlockReduce(sum, Sum{});
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] /= sum;
  }
}

}  // namespace

extern "C" void softmax_bf16_reference_cuda(const __nv_bfloat16* x, double* y, int64_t rows,
                                            int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // The row loop covers any row count; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 20);
  SoftmaxBf16Reference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, rows, cols);
}
