// Trusted GPU reference: y[c, r] = x[r, c], widened to double. 32x32 tiles through shared memory
// so that both the read and the write are coalesced; tiles are looped over so that no grid
// dimension can exceed its limit.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // blockDim = (32, 8): each thread moves 4 elements per tile

__global__ void TransposeReference(const float* x, double* y, int64_t rows, int64_t cols) {
  __shared__ float tile[kTile][kTile + 1];  // +1: column reads hit 32 different banks
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  for (int64_t tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
    for (int64_t tc = blockIdx.x; tc < col_tiles; tc += gridDim.x) {
      const int64_t r0 = tr * kTile;
      const int64_t c0 = tc * kTile;
      for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
        const int64_t r = r0 + i;
        const int64_t c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = x[r * cols + c];
      }
      __syncthreads();
      for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
        const int64_t c = c0 + i;                // row of y
        const int64_t r = r0 + threadIdx.x;      // column of y
        if (r < rows && c < cols) y[c * rows + r] = static_cast<double>(tile[threadIdx.x][i]);
      }
      __syncthreads();
    }
  }
}

}  // namespace

extern "C" void transpose_reference_cuda(const float* x, double* y, int64_t rows, int64_t cols,
                                         cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 20)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  TransposeReference<<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(x, y, rows, cols);
}
