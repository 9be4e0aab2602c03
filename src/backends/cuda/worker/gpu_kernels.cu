#include "backends/cuda/worker/gpu_kernels.h"

#include "tensor/normal_sample.h"

#include <cmath>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ksmith {
namespace {

__device__ unsigned long long GlobalTimerNs() {
  unsigned long long value;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(value));
  return value;
}

// Spins at least `min_spin_ns` so that the clock reading spans enough time to be meaningful.
__global__ void BlockingKernel(volatile BlockingProbe* probe, unsigned long long timeout_ns,
                               unsigned long long min_spin_ns) {
  const unsigned long long start_ns = GlobalTimerNs();
  const long long start_ticks = clock64();
  int timed_out = 0;
  while (probe->released == 0 || GlobalTimerNs() - start_ns < min_spin_ns) {
    if (GlobalTimerNs() - start_ns > timeout_ns) {
      timed_out = 1;
      break;
    }
  }
  probe->clock_ticks = static_cast<unsigned long long>(clock64() - start_ticks);
  probe->elapsed_ns = GlobalTimerNs() - start_ns;
  probe->timed_out = timed_out;
  __threadfence_system();
}

__device__ uint64_t Mix(uint64_t value) {
  value += 0x9e3779b97f4a7c15ull;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ull;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebull;
  return value ^ (value >> 31);
}

// One thread per pair; pairs that collide only swap twice, which is still a permutation.
template <typename Element>
__global__ void SwapMutationKernel(Element* data, uint64_t count, int pairs, uint64_t seed) {
  const int pair = blockIdx.x * blockDim.x + threadIdx.x;
  if (pair >= pairs || count < 2) return;
  const uint64_t a = Mix(seed + 2 * pair) % count;
  const uint64_t b = Mix(seed + 2 * pair + 1) % count;
  const Element kept = data[a];
  data[a] = data[b];
  data[b] = kept;
}

// tensor/random.cc's counter-based generator, bit for bit: MixCounter, the open-interval uniform,
// and for normal values the shared float Box-Muller of each index's hash (tensor/normal_sample.h).
__device__ uint64_t MixCounter(uint64_t seed, uint64_t stream, uint64_t index) {
  return Mix(Mix(seed ^ Mix(stream)) + index);
}

__device__ double UniformOpen01(uint64_t seed, uint64_t stream, uint64_t index) {
  return (static_cast<double>(MixCounter(seed, stream, index) >> 11) + 0.5) * 0x1p-53;
}

// Distribution indices as in tensor/random.h.
constexpr int kNormal = 0, kUniform = 1, kLarge = 2, kPositive = 3, kTies = 4;

__device__ float RandomValue(int distribution, uint64_t seed, uint64_t stream, uint64_t i) {
  switch (distribution) {
    case kNormal:
    case kLarge: {
      const float value = normal_sample::StandardNormalFromBits(MixCounter(seed, stream, i));
      return normal_sample::MulRn(value, distribution == kLarge ? 1000.0f : 1.0f);
    }
    case kUniform: return static_cast<float>(2.0 * UniformOpen01(seed, stream, i) - 1.0);
    case kPositive: return static_cast<float>(UniformOpen01(seed, stream, i));
    case kTies: return static_cast<float>(static_cast<int>(MixCounter(seed, stream, i) % 9) - 4);
    default: return 0.0f;
  }
}

template <GpuElement kElement>
__global__ void RandomFillKernel(void* data, uint64_t count, int distribution, uint64_t seed, uint64_t stream,
                                 bool nonnegative, float scale, float offset) {
  const bool transformed = nonnegative || scale != 1.0f || offset != 0.0f;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    float value = RandomValue(distribution, seed, stream, i);
    // No contraction into an FMA: the host rounds the product and the sum apart.
    if (transformed) value = __fadd_rn(offset, __fmul_rn(scale, nonnegative ? fabsf(value) : value));
    if constexpr (kElement == GpuElement::kFloat32) static_cast<float*>(data)[i] = value;
    if constexpr (kElement == GpuElement::kFloat16) static_cast<__half*>(data)[i] = __float2half_rn(value);
    if constexpr (kElement == GpuElement::kBFloat16) static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16_rn(value);
  }
}

// FillInput's integer draw: low + MixCounter(seed, stream, i) % span.
__global__ void IntegerFillKernel(int32_t* data, uint64_t count, uint64_t seed, uint64_t stream, int64_t low,
                                  uint64_t span) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    data[i] = static_cast<int32_t>(low + static_cast<int64_t>(MixCounter(seed, stream, i) % span));
  }
}

template <GpuElement kElement>
__device__ float LoadElement(const void* data, uint64_t i) {
  if constexpr (kElement == GpuElement::kFloat32) return static_cast<const float*>(data)[i];
  if constexpr (kElement == GpuElement::kFloat16) return __half2float(static_cast<const __half*>(data)[i]);
  if constexpr (kElement == GpuElement::kBFloat16) {
    return __bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]);
  }
  if constexpr (kElement == GpuElement::kInt32) return static_cast<float>(static_cast<const int32_t*>(data)[i]);
  return 0.0f;
}

template <GpuElement kElement>
__global__ void CompareKernel(const void* got, const void* want, uint64_t count, float tolerance,
                              float scale, unsigned long long* mismatches) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const float w = LoadElement<kElement>(want, i);
    const float g = LoadElement<kElement>(got, i);
    if (!isfinite(w)) continue;
    if (!(fabsf(g - w) <= tolerance * (fabsf(w) + scale))) ++local;
  }
  if (local != 0) atomicAdd(mismatches, local);
}

template <GpuElement kElement>
__global__ void SumOfSquaresKernel(const void* data, uint64_t count, double* sum) {
  double local = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const float value = LoadElement<kElement>(data, i);
    if (isfinite(value)) local += static_cast<double>(value) * value;
  }
  for (int offset = 16; offset > 0; offset /= 2) local += __shfl_down_sync(0xffffffffu, local, offset);
  __shared__ double warps[32];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if (lane == 0) warps[warp] = local;
  __syncthreads();
  if (warp != 0) return;
  local = lane < (blockDim.x + 31) / 32 ? warps[lane] : 0.0;
  for (int offset = 16; offset > 0; offset /= 2) local += __shfl_down_sync(0xffffffffu, local, offset);
  if (lane == 0) atomicAdd(sum, local);
}

// `words` 4-byte words, then the 2-byte tail of a 16-bit tensor with an odd element count.
__global__ void FillKernel(uint32_t* data, uint64_t words, bool half_tail, uint32_t pattern) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < words;
       i += uint64_t{gridDim.x} * blockDim.x) {
    data[i] = pattern;
  }
  if (half_tail && blockIdx.x == 0 && threadIdx.x == 0) {
    reinterpret_cast<uint16_t*>(data + words)[0] = static_cast<uint16_t>(pattern & 0xffffu);
  }
}

__global__ void CountDifferencesKernel(const uint64_t* a, const uint64_t* b, uint64_t words, uint64_t tail_bytes,
                                       unsigned long long* differing) {
  unsigned long long count = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < words;
       i += uint64_t{gridDim.x} * blockDim.x) {
    count += a[i] != b[i];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const auto* tail_a = reinterpret_cast<const unsigned char*>(a + words);
    const auto* tail_b = reinterpret_cast<const unsigned char*>(b + words);
    for (uint64_t i = 0; i < tail_bytes; ++i) count += tail_a[i] != tail_b[i];
  }
  if (count != 0) atomicAdd(differing, count);
}

unsigned GridFor(uint64_t count, unsigned block) {
  const uint64_t blocks = (count + block - 1) / block;
  return static_cast<unsigned>(blocks < 4096 ? (blocks == 0 ? 1 : blocks) : 4096);
}

}  // namespace

cudaError_t LaunchBlockingKernel(volatile BlockingProbe* probe, uint64_t timeout_ns, cudaStream_t stream) {
  constexpr unsigned long long kMinSpinNs = 10'000;
  BlockingKernel<<<1, 1, 0, stream>>>(probe, timeout_ns, kMinSpinNs);
  return cudaGetLastError();
}

cudaError_t LaunchSwapMutation(void* data, uint64_t count, size_t element_bytes, int pairs, uint64_t seed,
                               cudaStream_t stream) {
  if (pairs <= 0) return cudaSuccess;
  const unsigned blocks = (pairs + 127) / 128;
  if (element_bytes == 2) {
    SwapMutationKernel<<<blocks, 128, 0, stream>>>(static_cast<uint16_t*>(data), count, pairs, seed);
  } else {
    SwapMutationKernel<<<blocks, 128, 0, stream>>>(static_cast<uint32_t*>(data), count, pairs, seed);
  }
  return cudaGetLastError();
}

cudaError_t LaunchCompare(GpuElement element, const void* got, const void* want, uint64_t count, float tolerance,
                          float scale, unsigned long long* mismatches, cudaStream_t stream) {
  const unsigned grid = GridFor(count, 256);
  switch (element) {
    case GpuElement::kFloat32:
      CompareKernel<GpuElement::kFloat32><<<grid, 256, 0, stream>>>(got, want, count, tolerance, scale, mismatches);
      break;
    case GpuElement::kFloat16:
      CompareKernel<GpuElement::kFloat16><<<grid, 256, 0, stream>>>(got, want, count, tolerance, scale, mismatches);
      break;
    case GpuElement::kBFloat16:
      CompareKernel<GpuElement::kBFloat16><<<grid, 256, 0, stream>>>(got, want, count, tolerance, scale, mismatches);
      break;
    case GpuElement::kInt32:
      CompareKernel<GpuElement::kInt32><<<grid, 256, 0, stream>>>(got, want, count, tolerance, scale, mismatches);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchSumOfSquares(GpuElement element, const void* data, uint64_t count, double* sum,
                               cudaStream_t stream) {
  const unsigned grid = GridFor(count, 256);
  switch (element) {
    case GpuElement::kFloat32: SumOfSquaresKernel<GpuElement::kFloat32><<<grid, 256, 0, stream>>>(data, count, sum); break;
    case GpuElement::kFloat16: SumOfSquaresKernel<GpuElement::kFloat16><<<grid, 256, 0, stream>>>(data, count, sum); break;
    case GpuElement::kBFloat16: SumOfSquaresKernel<GpuElement::kBFloat16><<<grid, 256, 0, stream>>>(data, count, sum); break;
    case GpuElement::kInt32: SumOfSquaresKernel<GpuElement::kInt32><<<grid, 256, 0, stream>>>(data, count, sum); break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchRandomFill(GpuElement element, void* data, uint64_t count, int distribution, uint64_t seed,
                             uint64_t stream_id, cudaStream_t stream, bool nonnegative, float scale, float offset) {
  const unsigned grid = GridFor(count, 256);
  switch (element) {
    case GpuElement::kFloat32:
      RandomFillKernel<GpuElement::kFloat32><<<grid, 256, 0, stream>>>(data, count, distribution, seed, stream_id,
                                                                         nonnegative, scale, offset);
      break;
    case GpuElement::kFloat16:
      RandomFillKernel<GpuElement::kFloat16><<<grid, 256, 0, stream>>>(data, count, distribution, seed, stream_id,
                                                                         nonnegative, scale, offset);
      break;
    case GpuElement::kBFloat16:
      RandomFillKernel<GpuElement::kBFloat16><<<grid, 256, 0, stream>>>(data, count, distribution, seed, stream_id,
                                                                         nonnegative, scale, offset);
      break;
    case GpuElement::kInt32:
      return cudaErrorInvalidValue;  // integer inputs are filled by LaunchIntegerFill
  }
  return cudaGetLastError();
}

cudaError_t LaunchIntegerFill(void* data, uint64_t count, uint64_t seed, uint64_t stream_id, int64_t low,
                              int64_t high, cudaStream_t stream) {
  if (high <= low) return cudaErrorInvalidValue;
  IntegerFillKernel<<<GridFor(count, 256), 256, 0, stream>>>(static_cast<int32_t*>(data), count, seed, stream_id,
                                                              low, static_cast<uint64_t>(high - low));
  return cudaGetLastError();
}

cudaError_t LaunchCountDifferences(const void* a, const void* b, uint64_t bytes, unsigned long long* differing,
                                   cudaStream_t stream) {
  const uint64_t words = bytes / 8;
  CountDifferencesKernel<<<GridFor(words, 256), 256, 0, stream>>>(static_cast<const uint64_t*>(a),
                                                                   static_cast<const uint64_t*>(b), words, bytes % 8,
                                                                   differing);
  return cudaGetLastError();
}

cudaError_t LaunchFill(void* data, uint64_t bytes, uint32_t pattern, cudaStream_t stream) {
  const uint64_t words = bytes / 4;
  const bool half_tail = bytes % 4 == 2;
  if (words == 0 && !half_tail) return cudaSuccess;
  FillKernel<<<GridFor(words, 256), 256, 0, stream>>>(static_cast<uint32_t*>(data), words, half_tail, pattern);
  return cudaGetLastError();
}

}  // namespace ksmith
