// CUDA baseline: what `F.conv2d(x, wt)` costs in PyTorch eager without cuDNN (which the GPU
// machine lacks): its slow_conv2d path, im2col then a GEMM in full FP32 (no TF32). An im2col
// kernel fills col[b, p, i*ow + j] = x[b, c, i + r, j + s] (p = (c*kh + r)*kw + s) for a chunk of
// batch items into a cached temporary (PyTorch's caching allocator makes eager temporaries nearly
// free: a function-local buffer grown with cudaMalloc only when too small), then one
// cublasSgemmStridedBatched computes y[b] [cout, oh*ow] = wt [cout, cin*kh*kw] @ col[b] for the
// chunk (wt shared: batch stride 0). cuBLAS is column-major, so y[b]^T = col[b]^T wt^T is
// gemm(N, N, oh*ow, cout, cin*kh*kw, col[b], wt).
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
      std::fprintf(stderr, "conv2d baseline: cublasCreate failed\n");
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

__global__ void Im2col(const float* x, float* col, int64_t items, int64_t cin, int64_t h, int64_t w,
                       int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const int64_t positions = oh * ow;
  const int64_t total = items * cin * kh * kw * positions;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t position = e % positions;
    const int64_t row = e / positions;  // ((b * cin + c) * kh + r) * kw + s
    const int64_t s = row % kw;
    const int64_t r = (row / kw) % kh;
    const int64_t bc = row / (kw * kh);  // b * cin + c
    const int64_t i = position / ow;
    const int64_t j = position % ow;
    col[e] = x[(bc * h + i + r) * w + j + s];
  }
}

}  // namespace

extern "C" void conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t cin, int64_t h,
                       int64_t w, int64_t cout, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                       cudaStream_t stream) {
  if (n <= 0 || cin <= 0 || cout <= 0 || kh <= 0 || kw <= 0 || oh <= 0 || ow <= 0) return;
  const int64_t depth = cin * kh * kw;
  const int64_t positions = oh * ow;
  cublasHandle_t handle = Handle();
  if (handle == nullptr || depth > INT_MAX || positions > INT_MAX || cout > INT_MAX) {
    std::fprintf(stderr, "conv2d baseline: no cuBLAS handle or dims beyond int\n");
    return;
  }
  const int64_t per_item = depth * positions;
  const int64_t chunk = std::min<int64_t>(n, std::max<int64_t>(1, kChunkFloats / per_item));
  float* col = Scratch(static_cast<size_t>(chunk * per_item));
  if (col == nullptr) {
    std::fprintf(stderr, "conv2d baseline: cudaMalloc of the im2col buffer failed\n");
    return;
  }
  cublasSetStream(handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  for (int64_t b0 = 0; b0 < n; b0 += chunk) {
    const int64_t items = std::min<int64_t>(chunk, n - b0);
    const int64_t total = items * per_item;
    const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t{1} << 20);
    Im2col<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x + b0 * cin * h * w, col, items, cin,
                                                              h, w, kh, kw, oh, ow);
    const cublasStatus_t status = cublasSgemmStridedBatched(
        handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(positions), static_cast<int>(cout),
        static_cast<int>(depth), &alpha, col, static_cast<int>(positions),
        static_cast<long long>(per_item), wt, static_cast<int>(depth), 0LL, &beta,
        y + b0 * cout * positions, static_cast<int>(positions),
        static_cast<long long>(cout * positions), static_cast<int>(items));
    if (status != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "conv2d baseline: cublasSgemmStridedBatched failed (%d)\n",
                   static_cast<int>(status));
      return;
    }
  }
}
