// CUDA baseline: what the backward of `F.rms_norm(x, (cols,), weight, eps=1e-6)` costs in PyTorch
// eager, written as the kernels of its row-norm backward, all in fp32: one block per row computes
// rstd (kept in a cached temporary, as the forward would have saved it), the block sum of
// g * x with g = dy * weight, and dx = rstd * g - rstd^3 * x * mean(g * x); then a column-tiled
// kernel for dweight (32 columns per block, 16 lanes over the rows, combined in a fixed order). For
// cols = 1 the dx formula cancels to its eps term, which fp32 cannot resolve that way: the closed
// form is the same value.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int kMaxThreads = 1024;
constexpr float kEps = 1e-6f;

// Every thread of the block must call it; blockDim.x is a multiple of 32. Safe to call back to
// back: `result` is rewritten only after every thread has passed the next barrier.
__device__ float BlockSum(float value) {
  __shared__ float partial[kMaxThreads / 32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

__global__ void GradInput(const float* x, const float* dy, const float* weight, float* dx,
                          float* rstds, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float squares = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) squares += xr[c] * xr[c];
    const float rstd = rsqrtf(BlockSum(squares) / static_cast<float>(cols) + kEps);
    float sum_gx = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum_gx += dyr[c] * weight[c] * xr[c];
    const float mean_gx = BlockSum(sum_gx) / static_cast<float>(cols);
    if (cols == 1) {
      if (threadIdx.x == 0) dxr[0] = kEps * rstd * rstd * rstd * (dyr[0] * weight[0]);
    } else {
      const float rstd3 = rstd * rstd * rstd;
      for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        dxr[c] = rstd * (dyr[c] * weight[c]) - rstd3 * xr[c] * mean_gx;
      }
    }
    if (threadIdx.x == 0) rstds[r] = rstd;
  }
}

constexpr int kColumns = 32;
constexpr int kLanes = 16;

__global__ void WeightBackward(const float* x, const float* dy, const float* rstds, float* dweight,
                               int64_t rows, int64_t cols) {
  __shared__ float part[kLanes][kColumns + 1];
  const int column = threadIdx.x % kColumns;
  const int lane = threadIdx.x / kColumns;
  const int64_t tiles = (cols + kColumns - 1) / kColumns;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t c = tile * kColumns + column;
    float sum = 0.0f;
    if (c < cols) {
      for (int64_t r = lane; r < rows; r += kLanes) sum += dy[r * cols + c] * (x[r * cols + c] * rstds[r]);
    }
    part[lane][column] = sum;
    __syncthreads();
    if (lane == 0 && c < cols) {
      float total = 0.0f;
      for (int l = 0; l < kLanes; ++l) total += part[l][column];
      dweight[c] = total;
    }
    __syncthreads();
  }
}

// The cached temporary (PyTorch's caching allocator makes eager temporaries nearly free): grown,
// never shrunk, when a call needs more.
float* Scratch(size_t elements) {
  static float* buffer = nullptr;
  static size_t capacity = 0;
  if (elements > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, elements * sizeof(float)) != cudaSuccess) return nullptr;
    capacity = elements;
  }
  return buffer;
}

}  // namespace

extern "C" void rmsnorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                 float* dweight, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  float* rstds = Scratch(static_cast<size_t>(rows));
  if (rstds == nullptr) {
    std::fprintf(stderr, "rmsnorm_backward baseline: no scratch memory\n");
    return;
  }
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const auto row_blocks = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 30));
  GradInput<<<row_blocks, threads, 0, stream>>>(x, dy, weight, dx, rstds, rows, cols);
  const int64_t tiles = (cols + kColumns - 1) / kColumns;
  const auto column_blocks = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 30));
  WeightBackward<<<column_blocks, kColumns * kLanes, 0, stream>>>(x, dy, rstds, dweight, rows, cols);
}
