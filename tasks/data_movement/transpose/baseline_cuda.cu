// CUDA baseline: the classic transpose a user would write or copy from the CUDA samples: 32x32
// tiles through shared memory with one column of padding, blockDim (32, 8), so that reads and
// writes are both coalesced. Tiles are looped over so that no grid dimension can overflow.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

__global__ void Transpose(const float* x, float* y, int64_t rows, int64_t cols) {
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
        const int64_t c = c0 + i;
        const int64_t r = r0 + threadIdx.x;
        if (r < rows && c < cols) y[c * rows + r] = tile[threadIdx.x][i];
      }
      __syncthreads();
    }
  }
}

}  // namespace

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(col_tiles, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  Transpose<<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(x, y, rows, cols);
}
