// Trusted GPU reference: y = a @ x with every product and sum in double, the same math as
// reference.cc (only the order of the double additions differs). Short rows (k < 2048) take one
// warp each, long ones a whole block; rows are walked with a stride loop, so any m is covered.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kLongRow = 2048;

__device__ double WarpSum(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;  // complete in lane 0
}

// One warp per row.
__global__ void MatvecShortRows(const float* a, const float* x, double* y, int64_t m, int64_t k) {
  const int lane = threadIdx.x % 32;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  for (int64_t i = first; i < m; i += static_cast<int64_t>(gridDim.x) * kWarps) {
    const float* ai = a + i * k;
    double sum = 0.0;
    for (int64_t p = lane; p < k; p += 32) sum += static_cast<double>(ai[p]) * x[p];
    sum = WarpSum(sum);
    if (lane == 0) y[i] = sum;
  }
}

// One block per row.
__global__ void MatvecLongRows(const float* a, const float* x, double* y, int64_t m, int64_t k) {
  __shared__ double partial[kWarps];
  for (int64_t i = blockIdx.x; i < m; i += gridDim.x) {
    const float* ai = a + i * k;
    double sum = 0.0;
    for (int64_t p = threadIdx.x; p < k; p += kThreads) sum += static_cast<double>(ai[p]) * x[p];
    sum = WarpSum(sum);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
      double total = 0.0;
      for (int w = 0; w < kWarps; ++w) total += partial[w];
      y[i] = total;
    }
    __syncthreads();  // partial is rewritten only after thread 0 has read it
  }
}

}  // namespace

extern "C" void matvec_reference_cuda(const float* a, const float* x, double* y, int64_t m,
                                      int64_t k, cudaStream_t stream) {
  if (m <= 0) return;
  if (k <= 0) {
    // An empty sum: y is all zeros (the dims are positive in every task shape; this is a guard).
    cudaMemsetAsync(y, 0, static_cast<size_t>(m) * sizeof(double), stream);
    return;
  }
  if (k >= kLongRow) {
    const int64_t blocks = std::min<int64_t>(m, int64_t{1} << 20);
    MatvecLongRows<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, x, y, m, k);
  } else {
    const int64_t blocks = std::min<int64_t>((m + kWarps - 1) / kWarps, int64_t{1} << 20);
    MatvecShortRows<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, x, y, m, k);
  }
}
