// Tuner seed for gelu_backward on a GPU: each block covers THREADS x PER_THREAD x VECTOR
// consecutive elements; with VECTOR 4 (and every pointer 16-byte aligned) a thread moves float4s,
// so a warp issues a quarter of the memory instructions. A vector that would cross n is done
// element by element, so every setting handles every n.
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

// dy * (Phi(x) + x phi(x)), the exact form (approximate='none'): erff is accurate to 2 ulp, and
// expf underflows to 0 for |x| beyond about 14, where x phi(x) is below float's range anyway.
__device__ __forceinline__ float Op(float v, float g) {
  const float cdf = 0.5f * (1.0f + erff(v * 0.70710678118654752f));
  const float pdf = expf(-0.5f * v * v) * 0.39894228040143268f;
  return g * (cdf + v * pdf);
}

template <int kVector>
__global__ void __launch_bounds__(THREADS)
    GeluBackward(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ dx,
                 int64_t n) {
  constexpr int64_t kPerBlock = int64_t{THREADS} * PER_THREAD * kVector;
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  for (int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
#pragma unroll
    for (int e = 0; e < PER_THREAD; ++e) {
      const int64_t i = block * kPerBlock + (int64_t{e} * THREADS + threadIdx.x) * kVector;
      if (kVector == 4 && i + 4 <= n) {
        const float4 v = *reinterpret_cast<const float4*>(x + i);
        const float4 g = *reinterpret_cast<const float4*>(dy + i);
        *reinterpret_cast<float4*>(dx + i) =
            make_float4(Op(v.x, g.x), Op(v.y, g.y), Op(v.z, g.z), Op(v.w, g.w));
      } else {
        for (int64_t j = i; j < i + kVector && j < n; ++j) dx[j] = Op(x[j], dy[j]);
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

extern "C" void gelu_backward(const float* x, const float* dy, float* dx, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const bool vector = VECTOR == 4 && Aligned(x) && Aligned(dy) && Aligned(dx);
  const int64_t per_block = int64_t{THREADS} * PER_THREAD * (vector ? 4 : 1);
  const int64_t needed = (n + per_block - 1) / per_block;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(needed, int64_t{1} << 30));
  if (vector) {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, GeluBackward<4>)(x, dy, dx, n);
  } else {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, GeluBackward<1>)(x, dy, dx, n);
  }
}
#endif  // KSMITH_HOST
