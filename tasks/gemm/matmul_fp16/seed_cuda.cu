// Tuner seed for matmul_fp16 on a GPU, on tensor cores through WMMA (mma.h): a block of 4 warps
// (2 x 2) computes a BLOCK_M x BLOCK_N tile of c, stepping through k K_STEP columns at a time
// staged in shared memory; each warp owns a (BLOCK_M / 2) x (BLOCK_N / 2) sub-tile as 16x16
// fp32 accumulator fragments and multiplies 16x16x16 fp16 fragments into them, so every sum is
// kept in fp32 and rounded to fp16 once, in the epilogue.
//
// Loads: a chunk of 8 consecutive halves is one 16-byte vector load when the row stride allows
// it (k % 8 == 0 for a, n % 8 == 0 for b, 16-byte aligned base) and the chunk lies inside the
// matrix; any other chunk (edges, odd strides) is loaded element by element, and elements outside
// the matrix are stored as zero in the shared tile, so the fragments multiply zero padding and
// any m, n, k (1 and odd values included) is handled. The epilogue stages each accumulator
// fragment through shared memory and stores only the elements inside c.
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune BLOCK_M: 64, 128
#ifndef BLOCK_M
#define BLOCK_M 128
#endif

// @tune BLOCK_N: 64, 128
#ifndef BLOCK_N
#define BLOCK_N 128
#endif

// @tune K_STEP: 32, 64
#ifndef K_STEP
#define K_STEP 32
#endif
namespace {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kStep = K_STEP;
constexpr int kWarpsM = 2;
constexpr int kWarpsN = 2;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWarpM = kBlockM / kWarpsM;  // rows of c per warp
constexpr int kWarpN = kBlockN / kWarpsN;  // columns of c per warp
constexpr int kFragsM = kWarpM / 16;
constexpr int kFragsN = kWarpN / 16;
// Shared rows padded by 8 halves (16 bytes): rows stay 16-byte aligned for vector stores, the
// leading dimensions stay multiples of 8 as WMMA requires, and fragment loads spread over banks.
constexpr int kLdA = kStep + 8;
constexpr int kLdB = kBlockN + 8;
constexpr int kChunk = 8;  // halves per 16-byte vector
static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0 && kStep % 16 == 0, "whole fragments");

}  // namespace

#ifdef KSMITH_DEVICE
#include <mma.h>

namespace {

using namespace nvcuda;

__global__ void __launch_bounds__(kThreads)
    HgemmWmma(const __half* __restrict__ a, const __half* __restrict__ b, __half* __restrict__ c,
              int64_t m, int64_t n, int64_t k, bool vector_a, bool vector_b) {
  // WMMA loads need 32-byte aligned fragment pointers: every fragment starts at a multiple of
  // 16 rows (16 * ld * 2 bytes, a multiple of 32) plus a multiple of 16 columns (32 bytes).
  __shared__ __align__(128) __half as[kBlockM * kLdA];  // as[i * kLdA + p] = a[row0 + i, k0 + p]
  __shared__ __align__(128) __half bs[kStep * kLdB];    // bs[p * kLdB + j] = b[k0 + p, col0 + j]
  __shared__ __align__(128) float staging[kThreads / 32][16 * 16];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;
  const __half zero = __float2half(0.0f);
  const int64_t row_tiles = (m + kBlockM - 1) / kBlockM;
  const int64_t col_tiles = (n + kBlockN - 1) / kBlockN;
  for (int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    for (int64_t tile_col = blockIdx.x; tile_col < col_tiles; tile_col += gridDim.x) {
      const int64_t row0 = tile_row * kBlockM;
      const int64_t col0 = tile_col * kBlockN;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
      }
      for (int64_t k0 = 0; k0 < k; k0 += kStep) {
        for (int e = threadIdx.x; e < kBlockM * kStep / kChunk; e += kThreads) {
          const int i = e / (kStep / kChunk);
          const int p = e % (kStep / kChunk) * kChunk;
          const int64_t row = row0 + i;
          const int64_t depth = k0 + p;
          __half* dst = as + i * kLdA + p;
          if (vector_a && row < m && depth + kChunk <= k) {
            *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(a + row * k + depth);
          } else {
#pragma unroll
            for (int q = 0; q < kChunk; ++q) {
              dst[q] = row < m && depth + q < k ? a[row * k + depth + q] : zero;
            }
          }
        }
        for (int e = threadIdx.x; e < kStep * kBlockN / kChunk; e += kThreads) {
          const int p = e / (kBlockN / kChunk);
          const int j = e % (kBlockN / kChunk) * kChunk;
          const int64_t depth = k0 + p;
          const int64_t col = col0 + j;
          __half* dst = bs + p * kLdB + j;
          if (vector_b && depth < k && col + kChunk <= n) {
            *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(b + depth * n + col);
          } else {
#pragma unroll
            for (int q = 0; q < kChunk; ++q) {
              dst[q] = depth < k && col + q < n ? b[depth * n + col + q] : zero;
            }
          }
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kStep; kk += 16) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag[kFragsM];
          wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag[kFragsN];
#pragma unroll
          for (int i = 0; i < kFragsM; ++i) {
            wmma::load_matrix_sync(a_frag[i], as + (warp_m * kWarpM + i * 16) * kLdA + kk, kLdA);
          }
#pragma unroll
          for (int j = 0; j < kFragsN; ++j) {
            wmma::load_matrix_sync(b_frag[j], bs + kk * kLdB + warp_n * kWarpN + j * 16, kLdB);
          }
#pragma unroll
          for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
          }
        }
        __syncthreads();  // the stage is refilled only after every warp has read it
      }
      // Epilogue: each fragment goes through this warp's staging tile, then the elements inside c
      // are rounded to fp16 and stored (16 consecutive columns per row: coalesced halves).
      float* stage = staging[warp];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) {
          wmma::store_matrix_sync(stage, acc[i][j], 16, wmma::mem_row_major);
          __syncwarp();
          const int64_t frag_row = row0 + warp_m * kWarpM + i * 16;
          const int64_t frag_col = col0 + warp_n * kWarpN + j * 16;
          for (int e = lane; e < 16 * 16; e += 32) {
            const int64_t row = frag_row + e / 16;
            const int64_t col = frag_col + e % 16;
            if (row < m && col < n) c[row * n + col] = __float2half_rn(stage[e]);
          }
          __syncwarp();  // the staging tile is rewritten only after every lane has read it
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

extern "C" void matmul_fp16(const __half* a, const __half* b, __half* c, int64_t m, int64_t n,
                            int64_t k, cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const bool vector_a = k % kChunk == 0 && Aligned(a);
  const bool vector_b = n % kChunk == 0 && Aligned(b);
  const int64_t row_tiles = (m + kBlockM - 1) / kBlockM;
  const int64_t col_tiles = (n + kBlockN - 1) / kBlockN;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  KSMITH_LAUNCH(grid, kThreads, 0, stream, HgemmWmma)(a, b, c, m, n, k, vector_a, vector_b);
}
#endif  // KSMITH_HOST
