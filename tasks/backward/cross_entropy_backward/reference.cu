// Trusted GPU reference: the cross-entropy gradient in double, the same math as reference.cc
// (row max, sum of exp(x - max) and of the targets, then (p * sum(target) - target) / rows). One
// block per row, block reductions in double.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

// Every thread of the block must call it; every thread gets the block's result. Safe to call
// back to back: `result` is rewritten only after every thread has passed the next barrier.
template <typename Op>
__device__ double BlockReduce(double value, Op op) {
  __shared__ double partial[kThreads / 32];
  __shared__ double result;
  for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
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

__global__ void CrossEntropyBackwardReference(const float* logits, const float* target, double* dlogits,
                                              int64_t rows, int64_t classes) {
  const double inv_rows = 1.0 / static_cast<double>(rows);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    double* dr = dlogits + r * classes;
    double mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) mx = fmax(mx, static_cast<double>(xr[c]));
    mx = BlockReduce(mx, Max{});
    double sum = 0.0;
    double target_sum = 0.0;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      sum += exp(static_cast<double>(xr[c]) - mx);
      target_sum += static_cast<double>(tr[c]);
    }
    sum = BlockReduce(sum, Sum{});
    target_sum = BlockReduce(target_sum, Sum{});
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      const double p = exp(static_cast<double>(xr[c]) - mx) / sum;
      dr[c] = (p * target_sum - static_cast<double>(tr[c])) * inv_rows;
    }
  }
}

}  // namespace

extern "C" void cross_entropy_backward_reference_cuda(const float* logits, const float* target,
                                                      double* dlogits, int64_t rows, int64_t classes,
                                                      cudaStream_t stream) {
  if (rows <= 0 || classes <= 0) return;
  // The row loop covers any row count; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 20);
  CrossEntropyBackwardReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      logits, target, dlogits, rows, classes);
}
