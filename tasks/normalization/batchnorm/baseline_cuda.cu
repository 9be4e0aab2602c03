// CUDA baseline: what `F.batch_norm(x, None, None, weight, bias, training=True)` costs in PyTorch
// eager on its native CUDA path (cuDNN aside), written the way its batch_norm_collect_statistics
// and batch_norm_transform_input kernels are: one block of 512 threads per channel, a 2-D block
// (x over hw, y over the batch) keeping fp32 Welford statistics that are merged across the block,
// the mean and 1/sqrt(var + eps) into a temporary; then a transform kernel over (channel, batch)
// writing weight * (x - mean) * invstd + bias.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kStatsThreads = 512;  // PyTorch's MAX_BLOCK_SIZE for these kernels
constexpr int kMaxGridY = 65535;

// PyTorch's getNumThreads: the smallest of 2, 4, ..., 256, 512 that covers `elements`.
int NumThreads(int64_t elements) {
  for (int threads : {2, 4, 8, 16, 32, 64, 128, 256}) {
    if (elements <= threads) return threads;
  }
  return kStatsThreads;
}

struct Welford {
  float mean;
  float m2;
  float count;
};

__device__ Welford Merge(Welford a, Welford b) {
  const float count = a.count + b.count;
  if (count == 0.0f) return a;
  const float delta = b.mean - a.mean;
  const float factor = b.count / count;
  return {a.mean + delta * factor, a.m2 + b.m2 + delta * delta * a.count * factor, count};
}

__device__ Welford ShuffleXor(Welford w, int offset) {
  return {__shfl_xor_sync(0xffffffffu, w.mean, offset), __shfl_xor_sync(0xffffffffu, w.m2, offset),
          __shfl_xor_sync(0xffffffffu, w.count, offset)};
}

// blockDim.x * blockDim.y == kStatsThreads. Writes mean[ch] and invstd[ch] for every channel.
__global__ void CollectStatistics(const float* x, float* mean, float* invstd, int64_t n, int64_t c,
                                  int64_t hw) {
  __shared__ Welford partial[kStatsThreads / 32];
  const float eps = 1e-5f;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    Welford w{0.0f, 0.0f, 0.0f};
    for (int64_t i = threadIdx.y; i < n; i += blockDim.y) {
      const float* xs = x + (i * c + ch) * hw;
      for (int64_t k = threadIdx.x; k < hw; k += blockDim.x) {
        const float v = xs[k];
        w.count += 1.0f;
        const float delta = v - w.mean;
        w.mean += delta / w.count;
        w.m2 += delta * (v - w.mean);
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) w = Merge(w, ShuffleXor(w, offset));
    __syncthreads();  // the previous channel's partials have been read
    if (tid % 32 == 0) partial[tid / 32] = w;
    __syncthreads();
    if (tid == 0) {
      Welford total = partial[0];
      for (int i = 1; i < kStatsThreads / 32; ++i) total = Merge(total, partial[i]);
      mean[ch] = total.mean;
      invstd[ch] = 1.0f / sqrtf(total.m2 / total.count + eps);
    }
  }
}

__global__ void TransformInput(const float* x, const float* weight, const float* bias,
                               const float* mean, const float* invstd, float* y, int64_t n, int64_t c,
                               int64_t hw) {
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    const float g = weight[ch], b = bias[ch], m = mean[ch], s = invstd[ch];
    const int64_t step = static_cast<int64_t>(blockDim.y) * gridDim.y;
    for (int64_t i = threadIdx.y + static_cast<int64_t>(blockIdx.y) * blockDim.y; i < n; i += step) {
      const float* xs = x + (i * c + ch) * hw;
      float* ys = y + (i * c + ch) * hw;
      for (int64_t k = threadIdx.x; k < hw; k += blockDim.x) ys[k] = g * (xs[k] - m) * s + b;
    }
  }
}

// PyTorch's caching allocator makes eager temporaries nearly free: a buffer kept across calls,
// grown only when too small.
float* Scratch(size_t floats) {
  static float* buffer = nullptr;
  static size_t capacity = 0;
  if (floats > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, floats * sizeof(float)) != cudaSuccess) return nullptr;
    capacity = floats;
  }
  return buffer;
}

}  // namespace

extern "C" void batchnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw, cudaStream_t stream) {
  if (n <= 0 || c <= 0 || hw <= 0) return;
  float* stats = Scratch(2 * static_cast<size_t>(c));
  if (stats == nullptr) return;
  float* mean = stats;
  float* invstd = stats + c;
  const unsigned channels = static_cast<unsigned>(std::min<int64_t>(c, int64_t{1} << 30));

  const int tf = NumThreads(hw);
  CollectStatistics<<<channels, dim3(tf, kStatsThreads / tf), 0, stream>>>(x, mean, invstd, n, c, hw);

  const int tx = std::max(NumThreads(hw / 4), std::min(NumThreads(hw), 64));
  const int ty = std::max(64 / tx, 1);
  const int64_t gy = std::max<int64_t>(
      1, std::min<int64_t>((256 * 1024) / c, (n + ty - 1) / ty));
  TransformInput<<<dim3(channels, static_cast<unsigned>(std::min<int64_t>(gy, kMaxGridY))), dim3(tx, ty),
                   0, stream>>>(x, weight, bias, mean, invstd, y, n, c, hw);
}
