// CUDA baseline: what `F.conv1d(x, w)` costs in PyTorch eager without cuDNN (which the GPU machine
// lacks): its slow_conv path, im2col then a GEMM in full FP32 (no TF32). An im2col kernel fills
// col[b, p, t] = x[b, c, t + q] (p = c*kw + q) for a chunk of batch items into a cached
// temporary (PyTorch's caching allocator makes eager temporaries nearly free: a function-local
// buffer grown with cudaMalloc only when too small), then one cublasSgemmStridedBatched computes
// y[b] [cout, lo] = w [cout, cin*kw] @ col[b] for the chunk (w shared: batch stride 0). cuBLAS is
// column-major, so y[b]^T = col[b]^T w^T is gemm(N, N, lo, cout, cin*kw, col[b], w).
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
      std::fprintf(stderr, "conv1d baseline: cublasCreate failed\n");
      return static_cast<cublasHandle_t>(nullptr);
    }
    cublasSetMathMode(created, CUBLAS_DEFAULT_MATH);  // never TF32 for sgemm
    return created;
  }();
  return handle;
}

// The cached temporary: grown (never shrunk) when a call needs more. cudaFree waits for the
// work that may still read the old buffer.
float* Scratch(size_t floats) {
  static float* buffer = nullptr;
  static size_t capacity = 0;
  if (floats > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, floats * sizeof(float)) != cudaSuccess) {
      buffer = nullptr;
      return nullptr;
    }
    capacity = floats;
  }
  return buffer;
}

// The temporary holds whole batch items, as many as fit in 2^26 floats (256 MiB), at least one.
constexpr int64_t kChunkFloats = int64_t{1} << 26;

__global__ void Im2col(const float* x, float* col, int64_t items, int64_t cin, int64_t l,
                       int64_t kw, int64_t lo) {
  const int64_t total = items * cin * kw * lo;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = e % lo;
    const int64_t row = e / lo;  // (b * cin + c) * kw + q
    const int64_t q = row % kw;
    const int64_t bc = row / kw;  // b * cin + c
    col[e] = x[bc * l + t + q];
  }
}

}  // namespace

extern "C" void conv1d(const float* x, const float* w, float* y, int64_t n, int64_t cin, int64_t l,
                       int64_t cout, int64_t kw, int64_t lo, cudaStream_t stream) {
  if (n <= 0 || cin <= 0 || cout <= 0 || kw <= 0 || lo <= 0) return;
  const int64_t depth = cin * kw;
  cublasHandle_t handle = Handle();
  if (handle == nullptr || depth > INT_MAX || lo > INT_MAX || cout > INT_MAX) {
    std::fprintf(stderr, "conv1d baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  const int64_t per_item = depth * lo;
  const int64_t chunk = std::min<int64_t>(n, std::max<int64_t>(1, kChunkFloats / per_item));
  float* col = Scratch(static_cast<size_t>(chunk * per_item));
  if (col == nullptr) {
    std::fprintf(stderr, "conv1d baseline: cudaMalloc of the im2col buffer failed\n");
    return;
  }
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  for (int64_t b0 = 0; b0 < n; b0 += chunk) {
    const int64_t items = std::min<int64_t>(chunk, n - b0);
    const int64_t total = items * per_item;
    const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t{1} << 20);
    Im2col<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x + b0 * cin * l, col, items, cin, l,
                                                              kw, lo);
    const cublasStatus_t status = cublasSgemmStridedBatched(
        handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(lo), static_cast<int>(cout),
        static_cast<int>(depth), &alpha, col, static_cast<int>(lo),
        static_cast<long long>(per_item), w, static_cast<int>(depth), 0LL, &beta,
        y + b0 * cout * lo, static_cast<int>(lo), static_cast<long long>(cout * lo),
        static_cast<int>(items));
    if (status != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "conv1d baseline: cublasSgemmStridedBatched failed (%d)\n",
                   static_cast<int>(status));
      return;
    }
  }
}
