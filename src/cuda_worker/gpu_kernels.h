// The worker's own small kernels: the blocking kernel that holds a sample's work back until it
// is all queued, the input mutations between timing rounds, and the device-side comparison of a
// timed output with the baseline's.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ksmith {

/// What the blocking kernel saw: SM clock ticks and nanoseconds over its spin, and whether it
/// gave up waiting (the host never released it: the candidate synchronized inside its call).
struct BlockingProbe {
  unsigned long long clock_ticks;
  unsigned long long elapsed_ns;
  int timed_out;
  int released;  // written by the host
};

/// Spins until `probe->released` or `timeout_ns` passes; one thread.
cudaError_t LaunchBlockingKernel(volatile BlockingProbe* probe, uint64_t timeout_ns, cudaStream_t stream);

/// Swaps `pairs` pairs of 4-byte elements of `data` (`count` elements), positions drawn from
/// `seed`: every round sees inputs no earlier round saw, with the same distribution of values.
cudaError_t LaunchSwapMutation(float* data, uint64_t count, int pairs, uint64_t seed, cudaStream_t stream);

/// Counts elements where |got - want| > tolerance * (|want| + scale), or got is not finite
/// while want is; adds the count to *mismatches.
cudaError_t LaunchCompare(const float* got, const float* want, uint64_t count, float tolerance,
                          float scale, unsigned long long* mismatches, cudaStream_t stream);

/// Fills `count` 4-byte words with `pattern`.
cudaError_t LaunchFill(uint32_t* data, uint64_t count, uint32_t pattern, cudaStream_t stream);

}  // namespace ksmith
