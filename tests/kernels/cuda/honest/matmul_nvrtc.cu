// Honest fast matmul in the NVRTC form: matmul_fast.cu's code, its device part built by NVRTC.
// In full FP32 (FMA on CUDA cores; no TF32, no half): 128x128 output tiles per
// block, 8-deep shared-memory steps, 8x8 outputs per thread held in registers. Threads own
// strided rows and columns (ty + 16 i, tx + 16 j) so that shared-memory reads are broadcasts or
// conflict-free; A is stored transposed with 4 floats of padding so that its stores are too.
// Out-of-range loads read zero and out-of-range stores are skipped, so every shape is handled.
#include <cstdint>
#include <ksmith/launch.h>

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 8;
constexpr int kTM = 8;
constexpr int kTN = 8;
constexpr int kEdgeM = kBM / kTM;  // 16 thread rows
constexpr int kEdgeN = kBN / kTN;  // 16 thread columns
constexpr int kThreads = kEdgeM * kEdgeN;

#ifdef KSMITH_DEVICE
namespace {

__global__ void __launch_bounds__(kThreads)
    Sgemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int64_t m,
          int64_t n, int64_t k) {
  __shared__ float as[kBK][kBM + 4];  // as[p][i] = a[row0 + i, k0 + p]
  __shared__ float bs[kBK][kBN];      // bs[p][j] = b[k0 + p, col0 + j]
  const int tx = threadIdx.x % kEdgeN;
  const int ty = threadIdx.x / kEdgeN;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kBN;
  const int64_t row_tiles = (m + kBM - 1) / kBM;
  for (int64_t tile = blockIdx.y; tile < row_tiles; tile += gridDim.y) {
    const int64_t row0 = tile * kBM;
    float acc[kTM][kTN] = {};
    for (int64_t k0 = 0; k0 < k; k0 += kBK) {
#pragma unroll
      for (int l = 0; l < kBM * kBK / kThreads; ++l) {
        const int e = threadIdx.x + l * kThreads;
        const int i = e / kBK;
        const int p = e % kBK;
        const int64_t row = row0 + i;
        const int64_t depth = k0 + p;
        as[p][i] = row < m && depth < k ? a[row * k + depth] : 0.0f;
      }
#pragma unroll
      for (int l = 0; l < kBK * kBN / kThreads; ++l) {
        const int e = threadIdx.x + l * kThreads;
        const int p = e / kBN;
        const int j = e % kBN;
        const int64_t depth = k0 + p;
        const int64_t col = col0 + j;
        bs[p][j] = depth < k && col < n ? b[depth * n + col] : 0.0f;
      }
      __syncthreads();
#pragma unroll
      for (int p = 0; p < kBK; ++p) {
        float av[kTM];
        float bv[kTN];
#pragma unroll
        for (int i = 0; i < kTM; ++i) av[i] = as[p][ty + kEdgeM * i];
#pragma unroll
        for (int j = 0; j < kTN; ++j) bv[j] = bs[p][tx + kEdgeN * j];
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
#pragma unroll
          for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kTM; ++i) {
      const int64_t row = row0 + ty + kEdgeM * i;
      if (row >= m) continue;
#pragma unroll
      for (int j = 0; j < kTN; ++j) {
        const int64_t col = col0 + tx + kEdgeN * j;
        if (col < n) c[row * n + col] = acc[i][j];
      }
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       cudaStream_t stream) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const ksmith::Dim3 grid(static_cast<unsigned>((n + kBN - 1) / kBN),
                  static_cast<unsigned>(std::min<int64_t>((m + kBM - 1) / kBM, 65535)));
  KSMITH_LAUNCH(grid, kThreads, 0, stream, Sgemm)(a, b, c, m, n, k);
}
#endif  // KSMITH_HOST
