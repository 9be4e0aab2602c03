// CUDA baseline: what torch.logsumexp(linear(x, w, b), dim=1) costs in PyTorch eager
// (allow_tf32 = False), unfused: addmm writes z = x @ w^T + b into a temporary (b broadcast into
// it, then cublasSgemm in full FP32 with beta = 1); then logsumexp's kernels as ATen runs them:
// the row maxima (amax; an infinite maximum is replaced by 0), z - max into a second temporary,
// exp in place, the row sums (one block per row, fp32 partial sums, a warp-shuffle block
// reduction) into y, and y = log(y) + max. The temporaries come from one buffer kept across calls
// and grown only when too small, as PyTorch's caching allocator would hand them out.
//
// cuBLAS is column-major: the row-major z [m, n] = x w^T is z^T = w x^T, which is
// sgemm(T, N, n, m, k, w, x): w's row-major [n, k] buffer read transposed, x's as it is.
#include <algorithm>
#include <climits>
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
      std::fprintf(stderr, "gemm_logsumexp baseline: cublasCreate failed\n");
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

// z[i, j] = b[j]: addmm's copy of the bias into its output.
__global__ void BroadcastBias(const float* b, float* z, int64_t m, int64_t n) {
  const int64_t total = m * n;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    z[e] = b[e % n];
  }
}

constexpr int kMaxRowThreads = 512;

// Every thread of the block must call it; blockDim.x is a multiple of 32. Safe to call back to
// back: `result` is rewritten only after every thread has passed the next barrier.
template <typename Op>
__device__ float BlockReduce(float value, Op op, float identity) {
  __shared__ float partial[kMaxRowThreads / 32];
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

// amax over each row, then logsumexp's masked_fill of infinite maxima with 0.
__global__ void RowMax(const float* z, float* maxes, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* zr = z + r * cols;
    float mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) mx = fmaxf(mx, zr[c]);
    mx = BlockReduce(mx, Max{}, -INFINITY);
    if (threadIdx.x == 0) maxes[r] = isinf(mx) ? 0.0f : mx;
  }
}

// e[i, j] = z[i, j] - maxes[i]: the broadcast subtraction.
__global__ void SubtractRowMax(const float* z, const float* maxes, float* e, int64_t rows, int64_t cols) {
  const int64_t total = rows * cols;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    e[i] = z[i] - maxes[i / cols];
  }
}

// exp_ in place.
__global__ void ExpInPlace(float* e, int64_t total) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    e[i] = expf(e[i]);
  }
}

__global__ void RowSum(const float* e, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* er = e + r * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += er[c];
    sum = BlockReduce(sum, Sum{}, 0.0f);
    if (threadIdx.x == 0) y[r] = sum;
  }
}

// log_ then add_(maxes), on the [m] result.
__global__ void LogAddMax(float* y, const float* maxes, int64_t rows) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += stride) {
    y[i] = logf(y[i]) + maxes[i];
  }
}

unsigned ElementwiseBlocks(int64_t total) {
  // The grid-stride loops cover any size; the cap only bounds the launch.
  return static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, int64_t{1} << 20));
}

}  // namespace

extern "C" void gemm_logsumexp(const float* x, const float* w, const float* b, float* y, int64_t m,
                               int64_t n, int64_t k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  cublasHandle_t handle = Handle();
  // The 32-bit API: every task shape has dims far below INT_MAX.
  if (handle == nullptr || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    std::fprintf(stderr, "gemm_logsumexp baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  const int64_t total = m * n;
  // z, then e, then the row maxima, each starting at a multiple of 16 floats.
  const int64_t padded = (total + 15) / 16 * 16;
  float* z = Scratch(static_cast<size_t>(2 * padded + m));
  if (z == nullptr) {
    std::fprintf(stderr, "gemm_logsumexp baseline: cudaMalloc of the temporaries failed\n");
    return;
  }
  float* e = z + padded;
  float* maxes = e + padded;
  BroadcastBias<<<ElementwiseBlocks(total), 256, 0, stream>>>(b, z, m, n);
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 1.0f;
  const cublasStatus_t status =
      cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                  static_cast<int>(k), &alpha, w, static_cast<int>(k), x, static_cast<int>(k), &beta,
                  z, static_cast<int>(n));
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gemm_logsumexp baseline: cublasSgemm failed (%d)\n", static_cast<int>(status));
  }
  const int threads = static_cast<int>((std::min<int64_t>(n, kMaxRowThreads) + 31) / 32 * 32);
  const auto rows = static_cast<unsigned>(std::min<int64_t>(m, int64_t{1} << 30));
  RowMax<<<rows, threads, 0, stream>>>(z, maxes, m, n);
  SubtractRowMax<<<ElementwiseBlocks(total), 256, 0, stream>>>(z, maxes, e, m, n);
  ExpInPlace<<<ElementwiseBlocks(total), 256, 0, stream>>>(e, total);
  RowSum<<<rows, threads, 0, stream>>>(e, y, m, n);
  LogAddMax<<<ElementwiseBlocks(m), 256, 0, stream>>>(y, maxes, m);
}
