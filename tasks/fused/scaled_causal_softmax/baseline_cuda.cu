// CUDA baseline: what `torch.softmax((x * 0.125).masked_fill_(mask, -inf), dim=-1)` costs in
// PyTorch eager, unfused: its vectorized elementwise multiply (128 threads x 4 elements, float4
// when aligned) writes a [heads, s, s] temporary; an elementwise masked fill sets the entries
// after the diagonal to -inf in place (tested as j > i rather than read from a bool mask tensor,
// which spares the baseline that read); then a softmax kernel written as cunn_SoftMaxForward (one
// block per row, block size = s rounded up to a warp multiple, at most 1024: a block max, a block
// sum of exp(x - max), then exp(x - max) / sum, all in fp32) runs over every full row. The
// temporary is a device buffer kept between calls and grown only when too small, as PyTorch's
// caching allocator makes an eager temporary nearly free.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int kElementThreads = 128;
constexpr int kPerThread = 4;
constexpr int kPerBlock = kElementThreads * kPerThread;
constexpr int kMaxThreads = 1024;

// A device buffer of at least `count` floats, or nullptr when it cannot be had.
float* Temporary(int64_t count) {
  static float* buffer = nullptr;
  static int64_t capacity = 0;
  if (count > capacity) {
    if (buffer != nullptr) cudaFree(buffer);  // synchronizes: no queued kernel still uses it
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, static_cast<size_t>(count) * sizeof(float)) != cudaSuccess) {
      std::fprintf(stderr, "scaled_causal_softmax baseline: cudaMalloc of the temporary failed\n");
      buffer = nullptr;
      return nullptr;
    }
    capacity = count;
  }
  return buffer;
}

template <bool kVectorized>
__global__ void ScaleKernel(const float* x, float* out, int64_t n) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kPerBlock;
  if (kVectorized && base + kPerBlock <= n) {
    const int64_t k = base + static_cast<int64_t>(threadIdx.x) * kPerThread;
    const float4 v = *reinterpret_cast<const float4*>(x + k);
    *reinterpret_cast<float4*>(out + k) = make_float4(v.x * 0.125f, v.y * 0.125f, v.z * 0.125f, v.w * 0.125f);
    return;
  }
  for (int e = 0; e < kPerThread; ++e) {
    const int64_t k = base + threadIdx.x + static_cast<int64_t>(e) * kElementThreads;
    if (k < n) out[k] = x[k] * 0.125f;
  }
}

// scores[h, i, j] = -inf where j > i, in place, element by element.
__global__ void CausalMaskFill(float* scores, int64_t n, int64_t s) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kPerBlock;
  for (int e = 0; e < kPerThread; ++e) {
    const int64_t k = base + threadIdx.x + static_cast<int64_t>(e) * kElementThreads;
    if (k < n) {
      const int64_t j = k % s;
      const int64_t i = (k / s) % s;
      if (j > i) scores[k] = -INFINITY;
    }
  }
}

// Every thread of the block must call it; blockDim.x is a multiple of 32. Safe to call back to
// back: `result` is rewritten only after every thread has passed the next barrier.
template <typename Op>
__device__ float BlockReduce(float value, Op op, float identity) {
  __shared__ float partial[kMaxThreads / 32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) {
    value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  }
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : identity;
    for (int offset = 16; offset > 0; offset /= 2) {
      value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
    }
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};

__global__ void Softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) mx = fmaxf(mx, xr[c]);
    mx = BlockReduce(mx, Max{}, -INFINITY);
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(xr[c] - mx);
    sum = BlockReduce(sum, Sum{}, 0.0f);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - mx) / sum;
  }
}

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void scaled_causal_softmax(const float* x, float* y, int64_t heads, int64_t s,
                                      cudaStream_t stream) {
  if (heads <= 0 || s <= 0) return;
  const int64_t n = heads * s * s;
  float* scores = Temporary(n);
  if (scores == nullptr) return;
  const auto blocks = static_cast<unsigned>((n + kPerBlock - 1) / kPerBlock);
  if (Aligned(x)) {  // cudaMalloc memory is aligned far beyond 16 bytes
    ScaleKernel<true><<<blocks, kElementThreads, 0, stream>>>(x, scores, n);
  } else {
    ScaleKernel<false><<<blocks, kElementThreads, 0, stream>>>(x, scores, n);
  }
  CausalMaskFill<<<blocks, kElementThreads, 0, stream>>>(scores, n, s);
  const int threads = static_cast<int>((std::min<int64_t>(s, kMaxThreads) + 31) / 32 * 32);
  const int64_t rows = std::min<int64_t>(heads * s, int64_t{1} << 30);
  Softmax<<<static_cast<unsigned>(rows), threads, 0, stream>>>(scores, y, heads * s, s);
}
