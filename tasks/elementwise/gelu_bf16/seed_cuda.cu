// Tuner seed for gelu_bf16 on a GPU: each block covers THREADS x PER_THREAD x VECTOR consecutive
// elements; with VECTOR 8 (and both pointers 16-byte aligned) a thread moves 16-byte vectors of
// 8 bf16, so a warp issues an eighth of the memory instructions. Math in fp32, each result
// rounded once to bf16. A vector that would cross n is done element by element, so every setting
// handles every n.
#include <cstdint>
#include <cuda_bf16.h>
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

// @tune VECTOR: 1, 8
#ifndef VECTOR
#define VECTOR 8
#endif

#ifdef KSMITH_DEVICE
namespace {

// The exact form, approximate='none': erff is accurate to 2 ulp.
__device__ __forceinline__ float Op(float v) {
  return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

template <int kVector>
__global__ void __launch_bounds__(THREADS) Gelu(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t n) {
  constexpr int64_t kPerBlock = int64_t{THREADS} * PER_THREAD * kVector;
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  for (int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
#pragma unroll
    for (int e = 0; e < PER_THREAD; ++e) {
      const int64_t i = block * kPerBlock + (int64_t{e} * THREADS + threadIdx.x) * kVector;
      if (kVector == 8 && i + 8 <= n) {
        const uint4 in = *reinterpret_cast<const uint4*>(x + i);
        const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&in);
        uint4 out;
        __nv_bfloat162* results = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float2 v = __bfloat1622float2(pairs[j]);
          results[j] = __floats2bfloat162_rn(Op(v.x), Op(v.y));
        }
        *reinterpret_cast<uint4*>(y + i) = out;
      } else {
        for (int64_t j = i; j < i + kVector && j < n; ++j) {
          y[j] = __float2bfloat16_rn(Op(__bfloat162float(x[j])));
        }
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

extern "C" void gelu_bf16(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const bool vector = VECTOR == 8 && Aligned(x) && Aligned(y);
  const int64_t per_block = int64_t{THREADS} * PER_THREAD * (vector ? 8 : 1);
  const int64_t needed = (n + per_block - 1) / per_block;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(needed, int64_t{1} << 30));
  if (vector) {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, Gelu<8>)(x, y, n);
  } else {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, Gelu<1>)(x, y, n);
  }
}
#endif  // KSMITH_HOST
