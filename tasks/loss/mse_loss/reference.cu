// Trusted GPU reference: the mean of (pred - target)^2 in double, the same math as reference.cc.
// Deterministic: a fixed number of blocks (a function of n) each write a double partial sum,
// then one thread adds the partials in order and divides by n. Two kernels on the stream, no
// atomics.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

__device__ double g_partials[kMaxBlocks];

__global__ void PartialSums(const float* pred, const float* target, int64_t n) {
  __shared__ double warp_sums[kThreads / 32];
  double sum = 0.0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const double d = static_cast<double>(pred[i]) - static_cast<double>(target[i]);
    sum += d * d;
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
    g_partials[blockIdx.x] = total;
  }
}

__global__ void Finish(double* loss, int blocks, int64_t n) {
  double total = 0.0;
  for (int b = 0; b < blocks; ++b) total += g_partials[b];
  loss[0] = total / static_cast<double>(n);
}

}  // namespace

extern "C" void mse_loss_reference_cuda(const float* pred, const float* target, double* loss, int64_t n,
                                        cudaStream_t stream) {
  if (n <= 0) return;
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
  PartialSums<<<blocks, kThreads, 0, stream>>>(pred, target, n);
  Finish<<<1, 1, 0, stream>>>(loss, blocks, n);
}
