#include "cuda_worker/gpu_kernels.h"

#include <cmath>

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
__global__ void SwapMutationKernel(float* data, uint64_t count, int pairs, uint64_t seed) {
  const int pair = blockIdx.x * blockDim.x + threadIdx.x;
  if (pair >= pairs || count < 2) return;
  const uint64_t a = Mix(seed + 2 * pair) % count;
  const uint64_t b = Mix(seed + 2 * pair + 1) % count;
  const float kept = data[a];
  data[a] = data[b];
  data[b] = kept;
}

__global__ void CompareKernel(const float* got, const float* want, uint64_t count, float tolerance,
                              float scale, unsigned long long* mismatches) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const float w = want[i];
    const float g = got[i];
    if (!isfinite(w)) continue;
    if (!(fabsf(g - w) <= tolerance * (fabsf(w) + scale))) ++local;
  }
  if (local != 0) atomicAdd(mismatches, local);
}

__global__ void FillKernel(uint32_t* data, uint64_t count, uint32_t pattern) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    data[i] = pattern;
  }
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

cudaError_t LaunchSwapMutation(float* data, uint64_t count, int pairs, uint64_t seed, cudaStream_t stream) {
  if (pairs <= 0) return cudaSuccess;
  SwapMutationKernel<<<(pairs + 127) / 128, 128, 0, stream>>>(data, count, pairs, seed);
  return cudaGetLastError();
}

cudaError_t LaunchCompare(const float* got, const float* want, uint64_t count, float tolerance,
                          float scale, unsigned long long* mismatches, cudaStream_t stream) {
  CompareKernel<<<GridFor(count, 256), 256, 0, stream>>>(got, want, count, tolerance, scale, mismatches);
  return cudaGetLastError();
}

cudaError_t LaunchFill(uint32_t* data, uint64_t count, uint32_t pattern, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  FillKernel<<<GridFor(count, 256), 256, 0, stream>>>(data, count, pattern);
  return cudaGetLastError();
}

}  // namespace ksmith
