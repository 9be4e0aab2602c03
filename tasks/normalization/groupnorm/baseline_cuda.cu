// CUDA baseline: what `F.group_norm(x, g, weight, bias)` costs in PyTorch eager, written the way
// its CUDA kernels are: RowwiseMomentsCUDAKernel (one block per (sample, group), 512 threads, or a
// warp for short groups, fp32 Welford statistics merged across the block) writes mean and
// rstd = rsqrt(var + eps); ComputeFusedParamsCUDAKernel turns them into a per-(sample, channel)
// scale = rstd * weight and shift = bias - scale * mean; an elementwise kernel writes
// y = x * scale + shift. The three temporaries live in one cached device buffer.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kMomentThreads = 512;
constexpr int kThreads = 256;

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

// blockDim.x is 32 or kMomentThreads.
__global__ void RowwiseMoments(const float* x, float* mean, float* rstd, int64_t groups, int64_t length) {
  __shared__ Welford partial[kMomentThreads / 32];
  const float eps = 1e-5f;
  for (int64_t group = blockIdx.x; group < groups; group += gridDim.x) {
    const float* xg = x + group * length;
    Welford w{0.0f, 0.0f, 0.0f};
    for (int64_t e = threadIdx.x; e < length; e += blockDim.x) {
      const float v = xg[e];
      w.count += 1.0f;
      const float delta = v - w.mean;
      w.mean += delta / w.count;
      w.m2 += delta * (v - w.mean);
    }
    for (int offset = 16; offset > 0; offset /= 2) w = Merge(w, ShuffleXor(w, offset));
    if (blockDim.x > 32) {
      __syncthreads();  // the previous group's partials have been read
      if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = w;
      __syncthreads();
      if (threadIdx.x == 0) {
        for (unsigned i = 1; i < blockDim.x / 32; ++i) w = Merge(w, partial[i]);
      }
    }
    if (threadIdx.x == 0) {
      mean[group] = w.mean;
      rstd[group] = rsqrtf(fmaxf(w.m2 / w.count, 0.0f) + eps);
    }
  }
}

__global__ void ComputeFusedParams(const float* mean, const float* rstd, const float* weight,
                                   const float* bias, float* scale, float* shift, int64_t n, int64_t c,
                                   int64_t cpg) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < n * c;
       index += stride) {
    const int64_t ch = index % c;
    const int64_t group = index / cpg;  // (i * c + ch) / cpg = i * g + ch / cpg
    const float a = rstd[group] * weight[ch];
    scale[index] = a;
    shift[index] = -a * mean[group] + bias[ch];
  }
}

// y = x * scale[row] + shift[row], row = index / hw; 32-bit division when every index fits.
template <typename Index>
__global__ void Affine(const float* x, const float* scale, const float* shift, float* y, int64_t total,
                       int64_t hw) {
  const Index stride = static_cast<Index>(blockDim.x) * gridDim.x;
  const Index divisor = static_cast<Index>(hw);
  for (Index index = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
       index < static_cast<Index>(total); index += stride) {
    const Index row = index / divisor;
    y[index] = x[index] * scale[row] + shift[row];
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

unsigned Blocks(int64_t work, int64_t per_block) {
  return static_cast<unsigned>(std::min<int64_t>((work + per_block - 1) / per_block, int64_t{1} << 30));
}

}  // namespace

extern "C" void groupnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw, int64_t g, int64_t cpg, cudaStream_t stream) {
  if (n <= 0 || g <= 0 || cpg <= 0 || hw <= 0) return;
  const int64_t groups = n * g;
  const int64_t length = cpg * hw;
  float* buffer = Scratch(2 * static_cast<size_t>(groups) + 2 * static_cast<size_t>(n * c));
  if (buffer == nullptr) return;
  float* mean = buffer;
  float* rstd = mean + groups;
  float* scale = rstd + groups;
  float* shift = scale + n * c;

  const int moment_threads = length < kMomentThreads ? 32 : kMomentThreads;
  RowwiseMoments<<<Blocks(groups, 1), moment_threads, 0, stream>>>(x, mean, rstd, groups, length);
  ComputeFusedParams<<<Blocks(n * c, kThreads), kThreads, 0, stream>>>(mean, rstd, weight, bias, scale,
                                                                      shift, n, c, cpg);
  const int64_t total = n * c * hw;
  if (total < (int64_t{1} << 31)) {
    Affine<uint32_t><<<Blocks(total, kThreads), kThreads, 0, stream>>>(x, scale, shift, y, total, hw);
  } else {
    Affine<int64_t><<<Blocks(total, kThreads), kThreads, 0, stream>>>(x, scale, shift, y, total, hw);
  }
}
