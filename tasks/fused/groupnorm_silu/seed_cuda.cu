// Tuner seed for groupnorm_silu on a GPU: a (sample, group) pair belongs to a warp (GROUP_THREADS
// 32, for small groups) or to a whole block. Its threads sum the group's contiguous cpg * hw
// elements, then the squared deviations (two passes, so a large mean cancels nothing), then write
// y = silu((x - mean) * inv * weight + bias) in the same kernel: no temporary, y written once.
// The later passes read x again, mostly from L2. VECTOR 4 moves float4s when hw is a multiple of
// 4 (a float4 never straddles two channels) and every pointer is 16-byte aligned. A thread tracks
// the channel of its element incrementally (no 64-bit division per element).
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune GROUP_THREADS: 32, 256, 1024
#ifndef GROUP_THREADS
#define GROUP_THREADS 256
#endif

// @tune VECTOR: 1, 4
#ifndef VECTOR
#define VECTOR 4
#endif
namespace {

// A group belongs to kGroupThreads threads: one warp (several groups per block) or a whole block
// (one group per block at a time).
constexpr int kGroupThreads = GROUP_THREADS;
constexpr int kBlockThreads = kGroupThreads < 256 ? 256 : kGroupThreads;
constexpr int kGroupsPerBlock = kBlockThreads / kGroupThreads;

}  // namespace

#ifdef KSMITH_DEVICE
namespace {

// Sums `value` over the threads of a group; every one of them gets the result, so every one of
// them must call it.
// A template: nvcc gives a plain (not template, not forceinline) __device__ function a host stub
// that calls exit(), which the audit refuses.
template <typename T>
__device__ T GroupSum(T value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if constexpr (kGroupThreads == 32) {
    return value;
  } else {
    __shared__ T partial[kGroupThreads / 32];
    __syncthreads();  // every thread has read the previous call's partials
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
    __syncthreads();
    value = partial[0];
    for (int warp = 1; warp < kGroupThreads / 32; ++warp) value += partial[warp];
    return value;
  }
}

// v / (1 + exp(-v)): for v below about -88 expf overflows to infinity and the quotient is the
// exact limit -0.
__device__ __forceinline__ float Silu(float v) { return v / (1.0f + expf(-v)); }

// kVector 4: the caller checked that hw is a multiple of 4 and every pointer 16-byte aligned, so
// every group starts 16-byte aligned and a float4 never crosses a channel.
template <int kVector>
__global__ void __launch_bounds__(kBlockThreads)
    GroupNormSilu(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                  int64_t g, int64_t cpg, int64_t hw, int64_t c) {
  const int t = threadIdx.x % kGroupThreads;
  const int64_t size = cpg * hw;
  // Group-relative element offsets of this thread: t * kVector, then steps of `step`.
  constexpr int64_t step = int64_t{kGroupThreads} * kVector;
  const int64_t step_channels = step / hw;
  const int64_t step_rest = step - step_channels * hw;
  const int64_t first_channel = (int64_t{t} * kVector) / hw;
  const int64_t first_rest = int64_t{t} * kVector - first_channel * hw;
  // The groups this thread's warp/block handles: the same sequence for all of its threads, so
  // their shuffles and barriers are reached by all of them.
  for (int64_t group = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroupThreads;
       group < n * g; group += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock) {
    const int64_t b = group / g;
    const int64_t k = group - b * g;
    const float* xg = x + (b * c + k * cpg) * hw;
    float* yg = y + (b * c + k * cpg) * hw;
    float sum = 0.0f;
    for (int64_t e = int64_t{t} * kVector; e < size; e += step) {
      if constexpr (kVector == 4) {
        const float4 v = *reinterpret_cast<const float4*>(xg + e);
        sum += (v.x + v.y) + (v.z + v.w);
      } else {
        sum += xg[e];
      }
    }
    const float mean = GroupSum(sum) / static_cast<float>(size);
    float squares = 0.0f;
    for (int64_t e = int64_t{t} * kVector; e < size; e += step) {
      if constexpr (kVector == 4) {
        const float4 v = *reinterpret_cast<const float4*>(xg + e);
        const float p = v.x - mean, q = v.y - mean, r = v.z - mean, s = v.w - mean;
        squares += (p * p + q * q) + (r * r + s * s);
      } else {
        const float d = xg[e] - mean;
        squares += d * d;
      }
    }
    const float inv = 1.0f / sqrtf(GroupSum(squares) / static_cast<float>(size) + 1e-5f);
    int64_t channel = first_channel;  // of element e within the group
    int64_t rest = first_rest;        // e - channel * hw
    for (int64_t e = int64_t{t} * kVector; e < size; e += step) {
      const float scale = inv * weight[k * cpg + channel];
      const float shift = bias[k * cpg + channel];
      if constexpr (kVector == 4) {
        const float4 v = *reinterpret_cast<const float4*>(xg + e);
        *reinterpret_cast<float4*>(yg + e) =
            make_float4(Silu((v.x - mean) * scale + shift), Silu((v.y - mean) * scale + shift),
                        Silu((v.z - mean) * scale + shift), Silu((v.w - mean) * scale + shift));
      } else {
        yg[e] = Silu((xg[e] - mean) * scale + shift);
      }
      channel += step_channels;
      rest += step_rest;
      if (rest >= hw) {
        rest -= hw;
        ++channel;
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

extern "C" void groupnorm_silu(const float* x, const float* weight, const float* bias, float* y,
                               int64_t n, int64_t g, int64_t cpg, int64_t hw, int64_t c,
                               cudaStream_t stream) {
  if (n <= 0 || g <= 0 || cpg <= 0 || hw <= 0) return;
  const int64_t needed = (n * g + kGroupsPerBlock - 1) / kGroupsPerBlock;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(needed, int64_t{1} << 30));
  if (VECTOR == 4 && hw % 4 == 0 && Aligned(x) && Aligned(y)) {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, GroupNormSilu<4>)(x, weight, bias, y, n, g, cpg, hw, c);
  } else {
    KSMITH_LAUNCH(blocks, kBlockThreads, 0, stream, GroupNormSilu<1>)(x, weight, bias, y, n, g, cpg, hw, c);
  }
}
#endif  // KSMITH_HOST
