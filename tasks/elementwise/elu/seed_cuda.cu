// Tuner seed for elu on a GPU: each block covers THREADS x PER_THREAD x VECTOR consecutive
// elements; with VECTOR 4 (and every pointer 16-byte aligned) a thread moves float4s, so a warp
// issues a quarter of the memory instructions. A vector that would cross n is done element by
// element, so every setting handles every n.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune THREADS: 128, 256, 512
#ifndef THREADS
#define THREADS 256
#endif

// @tune PER_THREAD: 1, 4
#ifndef PER_THREAD
#define PER_THREAD 1
#endif

// @tune VECTOR: 1, 4
#ifndef VECTOR
#define VECTOR 4
#endif

#ifdef KSMITH_DEVICE
namespace {

// alpha = 1; expm1f (1 ulp) keeps the relative accuracy near 0 and gives -1 for large negative x.
__device__ __forceinline__ float Op(float v) { return v > 0.0f ? v : expm1f(v); }

template <int kVector>
__global__ void __launch_bounds__(THREADS) Elu(const float* x, float* y, int64_t n) {
  constexpr int64_t kPerBlock = int64_t{THREADS} * PER_THREAD * kVector;
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  for (int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
#pragma unroll
    for (int e = 0; e < PER_THREAD; ++e) {
      const int64_t i = block * kPerBlock + (int64_t{e} * THREADS + threadIdx.x) * kVector;
      if (kVector == 4 && i + 4 <= n) {
        const float4 v = *reinterpret_cast<const float4*>(x + i);
        *reinterpret_cast<float4*>(y + i) = make_float4(Op(v.x), Op(v.y), Op(v.z), Op(v.w));
      } else {
        for (int64_t j = i; j < i + kVector && j < n; ++j) y[j] = Op(x[j]);
      }
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void elu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const bool vector = VECTOR == 4 && Aligned(x) && Aligned(y);
  const int64_t per_block = int64_t{THREADS} * PER_THREAD * (vector ? 4 : 1);
  const int64_t needed = (n + per_block - 1) / per_block;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(needed, int64_t{1} << 30));
  if (vector) {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, Elu<4>)(x, y, n);
  } else {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, Elu<1>)(x, y, n);
  }
}
#endif  // KSMITH_HOST
