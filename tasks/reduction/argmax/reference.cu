// Trusted GPU reference: the first index of each row's maximum, the same answer as reference.cc.
// One block per row; each thread scans its strided share in increasing order keeping the first
// maximum it sees, then a block reduction of (value, index) pairs keeps the larger value and, on
// equal values, the lower index. Values are compared as doubles (exact for fp32 inputs).
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

struct Best {
  double value;
  int64_t index;
};

__device__ Best Better(Best a, Best b) {
  return a.value > b.value || (a.value == b.value && a.index < b.index) ? a : b;
}

// Every thread of the block must call it; every thread gets the block's result. Safe to call
// back to back: `result` is rewritten only after every thread has passed the next barrier.
__device__ Best BlockBest(Best best) {
  __shared__ Best partial[kThreads / 32];
  __shared__ Best result;
  for (int offset = 16; offset > 0; offset /= 2) {
    const Best other{__shfl_down_sync(0xffffffffu, best.value, offset),
                     __shfl_down_sync(0xffffffffu, best.index, offset)};
    best = Better(best, other);
  }
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = best;
  __syncthreads();
  if (warp == 0) {
    best = partial[0];
    for (int i = 1; i < kThreads / 32; ++i) best = Better(best, partial[i]);
    if (lane == 0) result = best;
  }
  __syncthreads();
  return result;
}

__global__ void ArgmaxReference(const float* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    // A thread with no element holds (-inf, cols): any real element beats it.
    Best best{-INFINITY, cols};
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double v = xr[c];
      if (v > best.value || best.index == cols) best = Best{v, c};
    }
    best = BlockBest(best);
    if (threadIdx.x == 0) y[r] = static_cast<double>(best.index);
  }
}

}  // namespace

extern "C" void argmax_reference_cuda(const float* x, double* y, int64_t rows, int64_t cols,
                                      cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // The row loop covers any row count; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 20);
  ArgmaxReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, rows, cols);
}
