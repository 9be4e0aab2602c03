// CUDA baseline: what the backward of `F.layer_norm(x, (cols,), weight, bias, eps=1e-5)` costs in
// PyTorch eager, written as its unfused kernels, all in fp32: the row statistics (mean, rstd; the
// forward would have saved them) into a cached temporary, one block per row for dx (block sums of
// g = dy * weight and g * xhat), then a column-tiled kernel for dweight and dbias (32 columns per
// block, 16 lanes over the rows, combined in a fixed order). For cols = 1, dx is exactly 0
// (g - mean(g) with an FMA-contracted product would leave a rounding error); for cols = 2 the dx
// formula cancels to its eps term, which fp32 cannot resolve that way: the closed form is the
// same value.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int kMaxThreads = 1024;
constexpr float kEps = 1e-5f;

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

// stats[2 r] = mean of row r, stats[2 r + 1] = its rstd.
__global__ void RowStats(const float* x, float* stats, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += xr[c];
    const float mean = BlockSum(sum) / static_cast<float>(cols);
    float squares = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = xr[c] - mean;
      squares += d * d;
    }
    const float rstd = rsqrtf(BlockSum(squares) / static_cast<float>(cols) + kEps);
    if (threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
  }
}

__global__ void GradInput(const float* x, const float* dy, const float* weight, const float* stats,
                          float* dx, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    const float mean = stats[2 * r];
    const float rstd = stats[2 * r + 1];
    if (cols == 1) {
      if (threadIdx.x == 0) dxr[0] = 0.0f;  // exactly: see the comment at the top
      continue;
    }
    if (cols == 2) {
      if (threadIdx.x == 0) {
        const float half_delta = (xr[0] - xr[1]) * 0.5f;
        const float r2 = rsqrtf(half_delta * half_delta + kEps);
        const float dx0 = kEps * r2 * r2 * r2 * (dyr[0] * weight[0] - dyr[1] * weight[1]) * 0.5f;
        dxr[0] = dx0;
        dxr[1] = -dx0;
      }
      continue;
    }
    float sum_g = 0.0f;
    float sum_gx = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float g = dyr[c] * weight[c];
      sum_g += g;
      sum_gx += g * (xr[c] - mean) * rstd;
    }
    const float mean_g = BlockSum(sum_g) / static_cast<float>(cols);
    const float mean_gx = BlockSum(sum_gx) / static_cast<float>(cols);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float xhat = (xr[c] - mean) * rstd;
      dxr[c] = rstd * (dyr[c] * weight[c] - mean_g - xhat * mean_gx);
    }
  }
}

constexpr int kColumns = 32;
constexpr int kLanes = 16;

__global__ void GammaBetaBackward(const float* x, const float* dy, const float* stats, float* dweight,
                                  float* dbias, int64_t rows, int64_t cols) {
  __shared__ float part_w[kLanes][kColumns + 1];
  __shared__ float part_b[kLanes][kColumns + 1];
  const int column = threadIdx.x % kColumns;
  const int lane = threadIdx.x / kColumns;
  const int64_t tiles = (cols + kColumns - 1) / kColumns;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t c = tile * kColumns + column;
    float sum_w = 0.0f;
    float sum_b = 0.0f;
    if (c < cols) {
      for (int64_t r = lane; r < rows; r += kLanes) {
        const float g = dy[r * cols + c];
        float xhat = (x[r * cols + c] - stats[2 * r]) * stats[2 * r + 1];
        if (cols == 2) {
          // +-half_delta * rstd exactly: x - mean carries mean's rounding error, large next to a
          // small half_delta.
          const float half_delta = (x[r * 2] - x[r * 2 + 1]) * 0.5f;
          xhat = (c == 0 ? half_delta : -half_delta) * rsqrtf(half_delta * half_delta + kEps);
        }
        sum_w += g * xhat;
        sum_b += g;
      }
    }
    part_w[lane][column] = sum_w;
    part_b[lane][column] = sum_b;
    __syncthreads();
    if (lane == 0 && c < cols) {
      float total_w = 0.0f;
      float total_b = 0.0f;
      for (int l = 0; l < kLanes; ++l) {
        total_w += part_w[l][column];
        total_b += part_b[l][column];
      }
      dweight[c] = total_w;
      dbias[c] = total_b;
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

extern "C" void layernorm_backward(const float* x, const float* dy, const float* weight, float* dx,
                                   float* dweight, float* dbias, int64_t rows, int64_t cols,
                                   cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  float* stats = Scratch(static_cast<size_t>(2 * rows));
  if (stats == nullptr) {
    std::fprintf(stderr, "layernorm_backward baseline: no scratch memory\n");
    return;
  }
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const auto row_blocks = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 30));
  RowStats<<<row_blocks, threads, 0, stream>>>(x, stats, rows, cols);
  GradInput<<<row_blocks, threads, 0, stream>>>(x, dy, weight, stats, dx, rows, cols);
  const int64_t tiles = (cols + kColumns - 1) / kColumns;
  const auto column_blocks = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 30));
  GammaBetaBackward<<<column_blocks, kColumns * kLanes, 0, stream>>>(x, dy, stats, dweight, dbias,
                                                                     rows, cols);
}
