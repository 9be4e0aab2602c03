// CUDA baseline: what torch.softmax(q @ k.T / sqrt(d), dim=-1) @ v costs in PyTorch eager
// (allow_tf32 = False; the math path of scaled_dot_product_attention), unfused: cublasSgemm in
// full FP32 writes the scaled scores q k^T / sqrt(d) into an [s, t] temporary (the scale folded
// into alpha), the softmax kernel (one block per row, as PyTorch's cunn_SoftMaxForward: block max,
// block sum of exp(a - max), then exp(a - max) / sum) writes the weights into a second one, and
// cublasSgemm multiplies them by v into o. The temporaries come from one buffer kept across calls
// and grown only when too small, as PyTorch's caching allocator would hand them out.
//
// cuBLAS is column-major. The row-major scores [s, t] = q k^T are, transposed, k q^T:
// sgemm(T, N, t, s, d, k, q). The row-major o [s, d] = p v is, transposed, v^T p^T:
// sgemm(N, N, d, s, t, v, p).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace {

// One handle for the process, created on first use (cublasCreate costs milliseconds) and never
// destroyed: the worker exits with it. A function-local static makes creation thread-safe.
cublasHandle_t Handle() {
  static cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    if (cublasCreate(&created) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "attention_head baseline: cublasCreate failed\n");
      return static_cast<cublasHandle_t>(nullptr);
    }
    // CUBLAS_DEFAULT_MATH never uses TF32 for sgemm.
    cublasSetMathMode(created, CUBLAS_DEFAULT_MATH);
    return created;
  }();
  return handle;
}

// The cached temporaries: grown (never shrunk) when a call needs more.
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

constexpr int kMaxThreads = 1024;

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

}  // namespace

extern "C" void attention_head(const float* q, const float* k, const float* v, float* o, int64_t s,
                               int64_t t, int64_t d, cudaStream_t stream) {
  if (s <= 0 || t <= 0 || d <= 0) return;
  cublasHandle_t handle = Handle();
  // The 32-bit API: every task shape has dims far below INT_MAX.
  if (handle == nullptr || s > INT_MAX || t > INT_MAX || d > INT_MAX) {
    std::fprintf(stderr, "attention_head baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  const int64_t total = s * t;
  // The scores, then the weights, starting at a multiple of 16 floats.
  const int64_t padded = (total + 15) / 16 * 16;
  float* scores = Scratch(static_cast<size_t>(padded + total));
  if (scores == nullptr) {
    std::fprintf(stderr, "attention_head baseline: cudaMalloc of the temporaries failed\n");
    return;
  }
  float* p = scores + padded;
  cublasSetStream(handle, stream);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float one = 1.0f;
  const float zero = 0.0f;
  cublasStatus_t status =
      cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(t), static_cast<int>(s),
                  static_cast<int>(d), &scale, k, static_cast<int>(d), q, static_cast<int>(d), &zero,
                  scores, static_cast<int>(t));
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "attention_head baseline: cublasSgemm (scores) failed (%d)\n", static_cast<int>(status));
  }
  const int threads = static_cast<int>((std::min<int64_t>(t, kMaxThreads) + 31) / 32 * 32);
  const int64_t blocks = std::min<int64_t>(s, int64_t{1} << 30);
  Softmax<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(scores, p, s, t);
  status = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d), static_cast<int>(s),
                       static_cast<int>(t), &one, v, static_cast<int>(d), p, static_cast<int>(t), &zero, o,
                       static_cast<int>(d));
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "attention_head baseline: cublasSgemm (output) failed (%d)\n", static_cast<int>(status));
  }
}
