// Trusted GPU reference: soft-target cross entropy in double, the same math as reference.cc (per
// row the max, the log of the sum of exp(x - max), the sum of target * log_softmax; the rows'
// sums negated and divided by rows). Deterministic: a fixed number of blocks (a function of
// rows) each take rows r = block, block + blocks, ... and add their row sums in that order into a
// double partial; then one thread adds the partials in order. Two kernels on the stream, no
// atomics.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

__device__ double g_partials[kMaxBlocks];

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

__global__ void RowSums(const float* logits, const float* target, int64_t rows, int64_t classes) {
  double block_total = 0.0;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    double mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) mx = fmax(mx, static_cast<double>(xr[c]));
    mx = BlockReduce(mx, Max{});
    double sum = 0.0;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) sum += exp(static_cast<double>(xr[c]) - mx);
    const double lse = log(BlockReduce(sum, Sum{}));
    double row = 0.0;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      row += static_cast<double>(tr[c]) * ((static_cast<double>(xr[c]) - mx) - lse);
    }
    block_total += BlockReduce(row, Sum{});
  }
  if (threadIdx.x == 0) g_partials[blockIdx.x] = block_total;
}

__global__ void Finish(double* loss, int blocks, int64_t rows) {
  double total = 0.0;
  for (int b = 0; b < blocks; ++b) total += g_partials[b];
  loss[0] = -total / static_cast<double>(rows);
}

}  // namespace

extern "C" void cross_entropy_reference_cuda(const float* logits, const float* target, double* loss,
                                             int64_t rows, int64_t classes, cudaStream_t stream) {
  if (rows <= 0 || classes <= 0) return;
  const int blocks = static_cast<int>(std::min<int64_t>(rows, kMaxBlocks));
  RowSums<<<blocks, kThreads, 0, stream>>>(logits, target, rows, classes);
  Finish<<<1, 1, 0, stream>>>(loss, blocks, rows);
}
