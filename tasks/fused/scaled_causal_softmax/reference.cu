// Trusted GPU reference: the scaled causal softmax in double, the same math as reference.cc
// (row max of 0.125 x over keys 0..i, sum of exp(0.125 x - max), divide; zeros for keys after i).
// One block per row, block reductions in double.
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

__global__ void ScaledCausalSoftmaxReference(const float* x, double* y, int64_t heads, int64_t s) {
  const double scale = 0.125;
  for (int64_t row = blockIdx.x; row < heads * s; row += gridDim.x) {
    const int64_t i = row % s;  // the query; keys 0..i are unmasked
    const float* xr = x + row * s;
    double* yr = y + row * s;
    double mx = -INFINITY;
    for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) mx = fmax(mx, scale * xr[j]);
    mx = BlockReduce(mx, Max{});
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) {
      const double e = exp(scale * xr[j] - mx);
      yr[j] = e;
      sum += e;
    }
    sum = BlockReduce(sum, Sum{});
    // Each thread rescales only the elements it wrote itself.
    for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) yr[j] /= sum;
    for (int64_t j = i + 1 + threadIdx.x; j < s; j += blockDim.x) yr[j] = 0.0;
  }
}

}  // namespace

extern "C" void scaled_causal_softmax_reference_cuda(const float* x, double* y, int64_t heads,
                                                     int64_t s, cudaStream_t stream) {
  if (heads <= 0 || s <= 0) return;
  // The row loop covers any row count; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>(heads * s, int64_t{1} << 20);
  ScaledCausalSoftmaxReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, heads, s);
}
