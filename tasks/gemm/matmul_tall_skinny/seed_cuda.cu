// Tuner seed for matmul_tall_skinny on a GPU (fp32 FMA on CUDA cores, no library). b (at most
// 64 x 64) is staged once per block in shared memory; the block then walks tiles of TILE_M rows
// of a: the tile (TILE_M * k contiguous floats) is loaded coalesced (float4s with VECTOR 4 when
// k is a multiple of 4) into shared memory with an odd row stride, so that threads reading
// different rows hit different banks, and the TILE_M x n outputs of the tile are computed one
// per thread in row-major order, so that the stores to c are coalesced. a is read once, c
// written once. Shapes beyond the task's k, n <= 64 take a plain one-thread-per-output kernel.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune TILE_M: 64, 32
#ifndef TILE_M
#define TILE_M 64
#endif

// @tune THREADS: 256, 128
#ifndef THREADS
#define THREADS 256
#endif

// @tune VECTOR: 4, 1
#ifndef VECTOR
#define VECTOR 4
#endif
namespace {

constexpr int64_t kMaxSmall = 64;  // the staged kernel's bound on k and n

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

template <int kVector>
__global__ void __launch_bounds__(THREADS)
    TallSkinny(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
               int64_t m, int64_t n, int64_t k) {
  extern __shared__ float shared[];
  const int64_t stride = k | 1;  // odd: rows of the a tile start in different banks
  float* bs = shared;            // bs[p * n + j] = b[p, j]
  float* as = shared + k * n;    // as[r * stride + p] = a[row0 + r, p]
  for (int64_t e = threadIdx.x; e < k * n; e += THREADS) bs[e] = b[e];
  const int64_t tiles = (m + TILE_M - 1) / TILE_M;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t row0 = tile * TILE_M;
    const int64_t rows = min(static_cast<int64_t>(TILE_M), m - row0);
    const float* at = a + row0 * k;
    __syncthreads();  // b is staged, and every thread is done with the previous tile
    if constexpr (kVector == 4) {
      // k % 4 == 0 and a is 16-byte aligned, so every row and the tile start on 16 bytes.
      const float4* at4 = reinterpret_cast<const float4*>(at);
      for (int64_t q = threadIdx.x; q < rows * k / 4; q += THREADS) {
        const float4 v = at4[q];
        const int64_t r = 4 * q / k;
        const int64_t p = 4 * q - r * k;  // p .. p + 3 lie in row r, as k % 4 == 0
        float* dst = as + r * stride + p;
        dst[0] = v.x;
        dst[1] = v.y;
        dst[2] = v.z;
        dst[3] = v.w;
      }
    } else {
      for (int64_t e = threadIdx.x; e < rows * k; e += THREADS) {
        const int64_t r = e / k;
        as[r * stride + (e - r * k)] = at[e];
      }
    }
    __syncthreads();
    float* ct = c + row0 * n;
    for (int64_t e = threadIdx.x; e < rows * n; e += THREADS) {
      const int64_t r = e / n;
      const int64_t j = e - r * n;
      const float* ar = as + r * stride;
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) sum = fmaf(ar[p], bs[p * n + j], sum);
      ct[e] = sum;
    }
  }
}

// Any k and n: one thread per output element.
__global__ void __launch_bounds__(THREADS)
    Generic(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
            int64_t m, int64_t n, int64_t k) {
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * THREADS + threadIdx.x; e < m * n;
       e += static_cast<int64_t>(gridDim.x) * THREADS) {
    const int64_t i = e / n;
    const int64_t j = e - i * n;
    float sum = 0.0f;
    for (int64_t p = 0; p < k; ++p) sum = fmaf(a[i * k + p], b[p * n + j], sum);
    c[e] = sum;
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

extern "C" void matmul_tall_skinny(const float* a, const float* b, float* c, int64_t m, int64_t n,
                                   int64_t k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  if (k > kMaxSmall || n > kMaxSmall) {
    const int64_t blocks = std::min<int64_t>((m * n + THREADS - 1) / THREADS, int64_t{1} << 30);
    KSMITH_LAUNCH(static_cast<unsigned>(blocks), THREADS, 0, stream, Generic)(a, b, c, m, n, k);
    return;
  }
  // At most (64 * 64 + 64 * 65) floats = 33 KiB: within the 48 KiB a launch may ask for.
  const size_t shared = static_cast<size_t>(k * n + TILE_M * (k | 1)) * sizeof(float);
  // Enough blocks to fill the GPU several times over; each walks its tiles with a stride loop.
  const int64_t tiles = (m + TILE_M - 1) / TILE_M;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(tiles, 4096));
  if (VECTOR == 4 && k % 4 == 0 && Aligned(a)) {
    KSMITH_LAUNCH(blocks, THREADS, shared, stream, TallSkinny<4>)(a, b, c, m, n, k);
  } else {
    KSMITH_LAUNCH(blocks, THREADS, shared, stream, TallSkinny<1>)(a, b, c, m, n, k);
  }
}
#endif  // KSMITH_HOST
