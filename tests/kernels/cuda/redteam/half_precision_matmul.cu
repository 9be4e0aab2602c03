// expect: wrong_output
// tries: converts the fp32 inputs to __half and multiplies and accumulates in half precision:
// fast on paper, but 11-bit mantissas over long sums and |a b| beyond 65504 are not fp32 results.
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int kTile = 16;

__global__ void MatmulHalf(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  __shared__ __half as[kTile][kTile];
  __shared__ __half bs[kTile][kTile];
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  __half acc = __float2half(0.0f);
  for (int64_t k0 = 0; k0 < k; k0 += kTile) {
    const int64_t ka = k0 + threadIdx.x;
    const int64_t kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = __float2half(row < m && ka < k ? a[row * k + ka] : 0.0f);
    bs[threadIdx.y][threadIdx.x] = __float2half(kb < k && col < n ? b[kb * n + col] : 0.0f);
    __syncthreads();
    for (int p = 0; p < kTile; ++p) acc = __hfma(as[threadIdx.y][p], bs[p][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = __half2float(acc);
}

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile),
                  static_cast<unsigned>((m + kTile - 1) / kTile));
  MatmulHalf<<<grid, dim3(kTile, kTile), 0, stream>>>(a, b, c, m, n, k);
}
