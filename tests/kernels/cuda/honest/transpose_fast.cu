// Honest fast transpose: when rows and cols are multiples of 4 and both pointers 16-byte aligned,
// 64x64 tiles moved with float4 loads and float4 stores through padded shared memory (each float4
// chunk is wholly inside or wholly outside the matrix); otherwise the classic 32x32 scalar tile.
// Tiles are looped over so that no grid dimension can overflow.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kWideTile = 64;
constexpr int kWideThreads = 256;  // 16 float4 columns x 16 rows per pass, 4 passes per tile
constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

__global__ void __launch_bounds__(kWideThreads) TransposeWide(const float* __restrict__ x,
                                                              float* __restrict__ y, int64_t rows,
                                                              int64_t cols) {
  __shared__ float tile[kWideTile][kWideTile + 1];
  const int quad = threadIdx.x % 16;   // which float4 along a tile row
  const int line = threadIdx.x / 16;   // which tile row, per pass of 16
  const int64_t row_tiles = (rows + kWideTile - 1) / kWideTile;
  const int64_t col_tiles = (cols + kWideTile - 1) / kWideTile;
  for (int64_t tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
    for (int64_t tc = blockIdx.x; tc < col_tiles; tc += gridDim.x) {
      const int64_t r0 = tr * kWideTile;
      const int64_t c0 = tc * kWideTile;
      for (int i = line; i < kWideTile; i += kWideThreads / 16) {
        const int64_t r = r0 + i;
        const int64_t c = c0 + 4 * quad;
        if (r < rows && c < cols) {
          const float4 v = *reinterpret_cast<const float4*>(x + r * cols + c);
          tile[i][4 * quad] = v.x;
          tile[i][4 * quad + 1] = v.y;
          tile[i][4 * quad + 2] = v.z;
          tile[i][4 * quad + 3] = v.w;
        }
      }
      __syncthreads();
      for (int j = line; j < kWideTile; j += kWideThreads / 16) {
        const int64_t c = c0 + j;         // row of y
        const int64_t r = r0 + 4 * quad;  // first of four columns of y
        if (c < cols && r < rows) {
          *reinterpret_cast<float4*>(y + c * rows + r) =
              make_float4(tile[4 * quad][j], tile[4 * quad + 1][j], tile[4 * quad + 2][j],
                          tile[4 * quad + 3][j]);
        }
      }
      __syncthreads();
    }
  }
}

__global__ void TransposeScalar(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                                int64_t cols) {
  __shared__ float tile[kTile][kTile + 1];
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

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

dim3 Grid(int64_t rows, int64_t cols, int64_t tile) {
  return dim3(static_cast<unsigned>(std::min<int64_t>((cols + tile - 1) / tile, int64_t{1} << 30)),
              static_cast<unsigned>(std::min<int64_t>((rows + tile - 1) / tile, 65535)));
}

}  // namespace

extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (rows % 4 == 0 && cols % 4 == 0 && Aligned(x) && Aligned(y)) {
    TransposeWide<<<Grid(rows, cols, kWideTile), kWideThreads, 0, stream>>>(x, y, rows, cols);
  } else {
    TransposeScalar<<<Grid(rows, cols, kTile), dim3(kTile, kRowsPerPass), 0, stream>>>(x, y, rows, cols);
  }
}
