// Trusted GPU reference: RMS norm backward in double, the same math as reference.cc. One block per
// row computes rstd, writes dx (the closed form for cols = 1) and keeps rstd in a cached scratch
// buffer; then the column sums dweight = sum_r dy * x * rstd, 32 columns per block, 8 lanes each
// summing every 8th row, the lanes combined in a fixed order.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;
constexpr double kEps = 1e-6;

// Every thread of the block must call it; every thread gets the block's sum. Safe to call back
// to back: `result` is rewritten only after every thread has passed the next barrier.
__device__ double BlockSum(double value) {
  __shared__ double partial[kThreads / 32];
  __shared__ double result;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = 0.0;
    for (int i = 0; i < kThreads / 32; ++i) value += partial[i];
    if (lane == 0) result = value;
  }
  __syncthreads();
  return result;
}

__global__ void RowsReference(const float* x, const float* dy, const float* weight, double* dx,
                              double* rstds, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    double* dxr = dx + r * cols;
    double squares = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) squares += static_cast<double>(xr[c]) * xr[c];
    const double rstd = 1.0 / sqrt(BlockSum(squares) / static_cast<double>(cols) + kEps);
    double sum_gx = 0.0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      sum_gx += static_cast<double>(dyr[c]) * static_cast<double>(weight[c]) * static_cast<double>(xr[c]);
    }
    const double mean_gx = BlockSum(sum_gx) / static_cast<double>(cols);
    if (cols == 1) {
      if (threadIdx.x == 0) {
        dxr[0] = kEps * rstd * rstd * rstd * (static_cast<double>(dyr[0]) * static_cast<double>(weight[0]));
      }
    } else {
      for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const double g = static_cast<double>(dyr[c]) * static_cast<double>(weight[c]);
        dxr[c] = rstd * g - rstd * rstd * rstd * static_cast<double>(xr[c]) * mean_gx;
      }
    }
    if (threadIdx.x == 0) rstds[r] = rstd;
  }
}

constexpr int kColumns = 32;  // columns per block
constexpr int kLanes = 8;     // row lanes per column

__global__ void ColumnsReference(const float* x, const float* dy, const double* rstds, double* dweight,
                                 int64_t rows, int64_t cols) {
  __shared__ double part[kLanes][kColumns];
  const int column = threadIdx.x % kColumns;
  const int lane = threadIdx.x / kColumns;
  const int64_t tiles = (cols + kColumns - 1) / kColumns;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t c = tile * kColumns + column;
    double sum = 0.0;
    if (c < cols) {
      for (int64_t r = lane; r < rows; r += kLanes) {
        sum += static_cast<double>(dy[r * cols + c]) * (static_cast<double>(x[r * cols + c]) * rstds[r]);
      }
    }
    part[lane][column] = sum;
    __syncthreads();
    if (lane == 0 && c < cols) {
      double total = 0.0;
      for (int l = 0; l < kLanes; ++l) total += part[l][column];
      dweight[c] = total;
    }
    __syncthreads();  // the shared sums are rewritten only after lane 0 has read them
  }
}

// Per-row rstd: a cached scratch buffer, grown (never shrunk) when a call needs more.
double* Scratch(size_t elements) {
  static double* buffer = nullptr;
  static size_t capacity = 0;
  if (elements > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, elements * sizeof(double)) != cudaSuccess) return nullptr;
    capacity = elements;
  }
  return buffer;
}

}  // namespace

extern "C" void rmsnorm_backward_reference_cuda(const float* x, const float* dy, const float* weight,
                                                double* dx, double* dweight, int64_t rows, int64_t cols,
                                                cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  double* rstds = Scratch(static_cast<size_t>(rows));
  if (rstds == nullptr) {
    std::fprintf(stderr, "rmsnorm_backward reference: no scratch memory\n");
    return;
  }
  // The row and tile loops cover any shape; the caps only bound the launches.
  const int64_t row_blocks = std::min<int64_t>(rows, int64_t{1} << 20);
  RowsReference<<<static_cast<unsigned>(row_blocks), kThreads, 0, stream>>>(x, dy, weight, dx, rstds,
                                                                            rows, cols);
  const int64_t tiles = (cols + kColumns - 1) / kColumns;
  const int64_t column_blocks = std::min<int64_t>(tiles, int64_t{1} << 20);
  ColumnsReference<<<static_cast<unsigned>(column_blocks), kColumns * kLanes, 0, stream>>>(
      x, dy, rstds, dweight, rows, cols);
}
