// CUDA baseline: what `F.cross_entropy(logits, target).backward()` (probability targets, mean
// reduction) costs in PyTorch eager, as the three fp32 kernels its autograd launches: the softmax
// forward, one block per row (block size = classes rounded up to a warp multiple, at most 1024),
// into a cached temporary (PyTorch keeps log_softmax; probabilities are stored here, the same
// traffic, because exp(log_softmax) would carry logsumexp's rounding, about |logsumexp| * 6e-8
// relative, past the tolerance for large logits); the elementwise g = -target / rows into a
// second temporary; then the backward, one block per row: dx = g - p * sum(g).
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int kMaxThreads = 1024;

// Every thread of the block must call it; blockDim.x is a multiple of 32. Safe to call back to
// back: `result` is rewritten only after every thread has passed the next barrier.
template <typename Op>
__device__ float BlockReduce(float value, Op op, float identity) {
  __shared__ float partial[kMaxThreads / 32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : identity;
    for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
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

__global__ void SoftmaxForward(const float* x, float* p, int64_t rows, int64_t classes) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * classes;
    float* pr = p + r * classes;
    float mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) mx = fmaxf(mx, xr[c]);
    mx = BlockReduce(mx, Max{}, -INFINITY);
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) sum += expf(xr[c] - mx);
    sum = BlockReduce(sum, Sum{}, 0.0f);
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) pr[c] = expf(xr[c] - mx) / sum;
  }
}

__global__ void ScaleTarget(const float* target, float* g, float scale, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    g[i] = target[i] * scale;
  }
}

__global__ void SoftmaxBackward(const float* p, const float* g, float* dx, int64_t rows, int64_t classes) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* pr = p + r * classes;
    const float* gr = g + r * classes;
    float* dr = dx + r * classes;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) sum += gr[c];
    sum = BlockReduce(sum, Sum{}, 0.0f);
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) dr[c] = gr[c] - pr[c] * sum;
  }
}

// The cached temporaries (PyTorch's caching allocator makes eager temporaries nearly free):
// grown, never shrunk, when a call needs more.
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

extern "C" void cross_entropy_backward(const float* logits, const float* target, float* dlogits,
                                       int64_t rows, int64_t classes, cudaStream_t stream) {
  if (rows <= 0 || classes <= 0) return;
  const int64_t n = rows * classes;
  float* p = Scratch(static_cast<size_t>(2 * n));
  if (p == nullptr) {
    std::fprintf(stderr, "cross_entropy_backward baseline: no scratch memory\n");
    return;
  }
  float* g = p + n;
  const int threads = static_cast<int>((std::min<int64_t>(classes, kMaxThreads) + 31) / 32 * 32);
  const auto row_blocks = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 30));
  SoftmaxForward<<<row_blocks, threads, 0, stream>>>(logits, p, rows, classes);
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, int64_t{1} << 30));
  ScaleTarget<<<blocks, 256, 0, stream>>>(target, g, -1.0f / static_cast<float>(rows), n);
  SoftmaxBackward<<<row_blocks, threads, 0, stream>>>(p, g, dlogits, rows, classes);
}
