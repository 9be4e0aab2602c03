// Tuner seed for groupnorm on a GPU: one block per (sample, group), whose cpg*hw values are one
// contiguous run. One read gathers the statistics as fp32 sums of (x - shift) and (x - shift)^2,
// the shift being the run's first value, so that a mean far from zero cancels nothing; a second
// read writes the output channel by channel (several channels at a time when hw is short), each
// with its own weight and bias. VECTOR 4 moves float4s when hw is a multiple of 4 and x and y
// are 16-byte aligned.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune THREADS: 256, 512, 1024
#ifndef THREADS
#define THREADS 256
#endif

// @tune VECTOR: 1, 4
#ifndef VECTOR
#define VECTOR 4
#endif
namespace {

constexpr int kWarps = THREADS / 32;

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

// Sums a and b over the block; every thread gets the results, so every thread must call it.
// A template, as every __device__ function holding a __shared__ array here: nvcc gives a plain
// one a host stub that calls exit(), an import the audit refuses.
template <int kWarps>
__device__ void BlockSum2(float& a, float& b) {
  __shared__ float partial[2][kWarps];
  for (int offset = 16; offset > 0; offset /= 2) {
    a += __shfl_xor_sync(0xffffffffu, a, offset);
    b += __shfl_xor_sync(0xffffffffu, b, offset);
  }
  __syncthreads();  // every thread has read the previous call's partials
  if (threadIdx.x % 32 == 0) {
    partial[0][threadIdx.x / 32] = a;
    partial[1][threadIdx.x / 32] = b;
  }
  __syncthreads();
  a = partial[0][0];
  b = partial[1][0];
  for (int w = 1; w < kWarps; ++w) {
    a += partial[0][w];
    b += partial[1][w];
  }
}

// seg_threads is a power of two <= THREADS: the output pass covers THREADS / seg_threads
// channels of the group at once, each by seg_threads threads striding over its hw / kVector units.
template <int kVector>
__global__ void __launch_bounds__(THREADS)
    GroupNorm(const float* x, const float* weight, const float* bias, float* y, int64_t groups,
              int64_t hw, int64_t g, int64_t cpg, int seg_threads) {
  const int lane = threadIdx.x & (seg_threads - 1);
  const int first = threadIdx.x / seg_threads;
  const int step = THREADS / seg_threads;
  const int64_t length = cpg * hw;
  const int64_t units = hw / kVector;
  const float count = static_cast<float>(length);
  for (int64_t group = blockIdx.x; group < groups; group += gridDim.x) {
    const float* xg = x + group * length;
    float* yg = y + group * length;
    const float shift = xg[0];
    float s1 = 0.0f, s2 = 0.0f;
    if constexpr (kVector == 4) {
      for (int64_t u = threadIdx.x; u < length / 4; u += THREADS) {
        const float4 v = reinterpret_cast<const float4*>(xg)[u];
        const float d0 = v.x - shift, d1 = v.y - shift, d2 = v.z - shift, d3 = v.w - shift;
        s1 += (d0 + d1) + (d2 + d3);
        s2 += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
      }
    } else {
      for (int64_t e = threadIdx.x; e < length; e += THREADS) {
        const float d = xg[e] - shift;
        s1 += d;
        s2 += d * d;
      }
    }
    BlockSum2<kWarps>(s1, s2);
    const float offset = s1 / count;  // mean - shift
    const float inv = 1.0f / sqrtf(fmaxf(s2 / count - offset * offset, 0.0f) + 1e-5f);
    const int64_t first_channel = (group % g) * cpg;
    for (int64_t q = first; q < cpg; q += step) {
      const float a = inv * weight[first_channel + q];
      const float b = bias[first_channel + q];
      const float* xs = xg + q * hw;
      float* ys = yg + q * hw;
      for (int64_t u = lane; u < units; u += seg_threads) {
        if constexpr (kVector == 4) {
          const float4 v = reinterpret_cast<const float4*>(xs)[u];
          reinterpret_cast<float4*>(ys)[u] =
              make_float4(((v.x - shift) - offset) * a + b, ((v.y - shift) - offset) * a + b,
                          ((v.z - shift) - offset) * a + b, ((v.w - shift) - offset) * a + b);
        } else {
          ys[u] = ((xs[u] - shift) - offset) * a + b;
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

// The smallest power of two that covers `units`, at most THREADS.
int SegThreads(int64_t units) {
  int threads = 1;
  while (threads < THREADS && threads < units) threads *= 2;
  return threads;
}

}  // namespace

extern "C" void groupnorm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                          int64_t c, int64_t hw, int64_t g, int64_t cpg, cudaStream_t stream) {
  (void)c;  // c = g * cpg
  if (n <= 0 || g <= 0 || cpg <= 0 || hw <= 0) return;
  const int64_t groups = n * g;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(groups, int64_t{1} << 30));
  if (VECTOR == 4 && hw % 4 == 0 && Aligned(x) && Aligned(y)) {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, GroupNorm<4>)(x, weight, bias, y, groups, hw, g, cpg, SegThreads(hw / 4));
  } else {
    KSMITH_LAUNCH(blocks, THREADS, 0, stream, GroupNorm<1>)(x, weight, bias, y, groups, hw, g, cpg, SegThreads(hw));
  }
}
#endif  // KSMITH_HOST
