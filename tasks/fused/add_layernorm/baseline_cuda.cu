// CUDA baseline: what `F.layer_norm(x + residual, (cols,), weight, bias, eps=1e-5)` costs in
// PyTorch eager, unfused: its vectorized elementwise add kernel (128 threads x 4 elements, float4
// when aligned) writes a [rows, cols] temporary, then a layer norm kernel reads it back: one block
// per row (block size = cols rounded up to a warp multiple, at most 1024), block reductions for
// the mean and the variance, then the affine write, all in fp32. The temporary is a device buffer
// kept between calls and grown only when too small, as PyTorch's caching allocator makes an eager
// temporary nearly free.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int kAddThreads = 128;
constexpr int kPerThread = 4;
constexpr int kPerBlock = kAddThreads * kPerThread;
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
      std::fprintf(stderr, "add_layernorm baseline: cudaMalloc of the temporary failed\n");
      buffer = nullptr;
      return nullptr;
    }
    capacity = count;
  }
  return buffer;
}

template <bool kVectorized>
__global__ void Add(const float* a, const float* b, float* out, int64_t n) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kPerBlock;
  if (kVectorized && base + kPerBlock <= n) {
    const int64_t i = base + static_cast<int64_t>(threadIdx.x) * kPerThread;
    const float4 u = *reinterpret_cast<const float4*>(a + i);
    const float4 v = *reinterpret_cast<const float4*>(b + i);
    *reinterpret_cast<float4*>(out + i) = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
    return;
  }
  for (int e = 0; e < kPerThread; ++e) {
    const int64_t i = base + threadIdx.x + static_cast<int64_t>(e) * kAddThreads;
    if (i < n) out[i] = a[i] + b[i];
  }
}

// Every thread of the block must call it; blockDim.x is a multiple of 32.
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

__global__ void Layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                          int64_t cols) {
  const float eps = 1e-5f;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += xr[c];
    const float mean = BlockSum(sum) / static_cast<float>(cols);
    float squares = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = xr[c] - mean;
      squares += d * d;
    }
    const float inv = rsqrtf(BlockSum(squares) / static_cast<float>(cols) + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      yr[c] = (xr[c] - mean) * inv * gamma[c] + beta[c];
    }
  }
}

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void add_layernorm(const float* x, const float* residual, const float* weight,
                              const float* bias, float* y, int64_t rows, int64_t cols,
                              cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int64_t n = rows * cols;
  float* sum = Temporary(n);
  if (sum == nullptr) return;
  const int64_t add_blocks = (n + kPerBlock - 1) / kPerBlock;
  if (Aligned(x) && Aligned(residual)) {  // cudaMalloc memory is aligned far beyond 16 bytes
    Add<true><<<static_cast<unsigned>(add_blocks), kAddThreads, 0, stream>>>(x, residual, sum, n);
  } else {
    Add<false><<<static_cast<unsigned>(add_blocks), kAddThreads, 0, stream>>>(x, residual, sum, n);
  }
  const int threads = static_cast<int>((std::min<int64_t>(cols, kMaxThreads) + 31) / 32 * 32);
  const int64_t blocks = std::min<int64_t>(rows, int64_t{1} << 30);
  Layernorm<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(sum, weight, bias, y, rows, cols);
}
