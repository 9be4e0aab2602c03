// CUDA baseline: what `torch.argmax(x, dim=-1)` costs in PyTorch eager, written plainly: one
// block per row (block size = cols rounded up to a warp multiple, at most 1024); each thread
// scans its strided share keeping the first maximum, then a block reduction of (value, index)
// pairs that keeps the larger value and, on ties, the lower index (PyTorch's ArgMaxOps rule).
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kMaxThreads = 1024;

struct Best {
  float value;
  int64_t index;
};

__device__ Best Better(Best a, Best b) {
  return a.value > b.value || (a.value == b.value && a.index < b.index) ? a : b;
}

__device__ Best Shuffle(Best best, int offset) {
  return Best{__shfl_down_sync(0xffffffffu, best.value, offset),
              __shfl_down_sync(0xffffffffu, best.index, offset)};
}

// Every thread of the block must call it; blockDim.x is a multiple of 32. Only thread 0's result
// is meaningful.
__device__ Best BlockBest(Best best) {
  __shared__ Best partial[kMaxThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) best = Better(best, Shuffle(best, offset));
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  __syncthreads();  // every thread has finished with the previous row's partials
  if (lane == 0) partial[warp] = best;
  __syncthreads();
  if (warp == 0) {
    best = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : Best{-INFINITY, INT64_MAX};
    for (int offset = 16; offset > 0; offset /= 2) best = Better(best, Shuffle(best, offset));
  }
  return best;
}

__global__ void Argmax(const float* x, int32_t* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    Best best{-INFINITY, INT64_MAX};
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = xr[c];
      if (v > best.value || best.index == INT64_MAX) best = Best{v, c};
    }
    best = BlockBest(best);
    if (threadIdx.x == 0) y[r] = static_cast<int32_t>(best.index);
  }
}

}  // namespace

extern "C" void argmax(const float* x, int32_t* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 30);
  Argmax<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, y, rows, cols);
}
