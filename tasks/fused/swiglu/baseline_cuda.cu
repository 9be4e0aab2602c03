// CUDA baseline: what `gate, up = x.chunk(2, -1); y = F.silu(gate) * up` costs in PyTorch eager,
// unfused: chunk makes two strided views (no copy); silu writes a contiguous [rows, cols]
// temporary, then the multiply reads it back with the up view and writes y. The views are not
// contiguous, so PyTorch runs its unrolled (not vectorized) elementwise kernel with an offset
// calculator: 128 threads, 4 elements per thread, one block per 512 elements, a row/column split
// of each index. The temporary is a device buffer kept between calls and grown only when too
// small, as PyTorch's caching allocator makes an eager temporary nearly free.
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 128;
constexpr int kPerThread = 4;
constexpr int kPerBlock = kThreads * kPerThread;

// A device buffer of at least `count` floats, or nullptr when it cannot be had.
float* Temporary(int64_t count) {
  static float* buffer = nullptr;
  static int64_t capacity = 0;
  if (count > capacity) {
    if (buffer != nullptr) cudaFree(buffer);  // synchronizes: no queued kernel still uses it
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, static_cast<size_t>(count) * sizeof(float)) != cudaSuccess) {
      std::fprintf(stderr, "swiglu baseline: cudaMalloc of the temporary failed\n");
      buffer = nullptr;
      return nullptr;
    }
    capacity = count;
  }
  return buffer;
}

// out[i] = silu(gate view[i]); the view's element i = (r, c) lies at x[r * two_cols + c].
__global__ void SiluKernel(const float* x, float* out, int64_t n, int64_t cols, int64_t two_cols) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kPerBlock;
  for (int e = 0; e < kPerThread; ++e) {
    const int64_t i = base + threadIdx.x + static_cast<int64_t>(e) * kThreads;
    if (i < n) {
      const int64_t r = i / cols;
      const float v = x[r * two_cols + (i - r * cols)];
      out[i] = v / (1.0f + expf(-v));
    }
  }
}

// y[i] = a[i] * up view[i]; the view's element i = (r, c) lies at x[r * two_cols + cols + c].
__global__ void MulKernel(const float* a, const float* x, float* y, int64_t n, int64_t cols,
                          int64_t two_cols) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kPerBlock;
  for (int e = 0; e < kPerThread; ++e) {
    const int64_t i = base + threadIdx.x + static_cast<int64_t>(e) * kThreads;
    if (i < n) {
      const int64_t r = i / cols;
      y[i] = a[i] * x[r * two_cols + cols + (i - r * cols)];
    }
  }
}

}  // namespace

extern "C" void swiglu(const float* x, float* y, int64_t rows, int64_t cols, int64_t two_cols,
                       cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int64_t n = rows * cols;
  float* activated = Temporary(n);
  if (activated == nullptr) return;
  const auto blocks = static_cast<unsigned>((n + kPerBlock - 1) / kPerBlock);
  SiluKernel<<<blocks, kThreads, 0, stream>>>(x, activated, n, cols, two_cols);
  MulKernel<<<blocks, kThreads, 0, stream>>>(activated, x, y, n, cols, two_cols);
}
