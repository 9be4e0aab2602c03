// The worker's own small kernels: the blocking kernel that holds a sample's work back until it
// is all queued, the input mutations between timing rounds, the device-side comparison of a
// timed output with the baseline's, and the byte comparison that finds late writes.
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
/// The element types of task tensors, as the comparison kernel reads them.
enum class GpuElement { kFloat32, kFloat16, kBFloat16, kInt32 };

/// Swaps `pairs` random pairs among `count` elements of `element_bytes` (2 or 4) each.
cudaError_t LaunchSwapMutation(void* data, uint64_t count, size_t element_bytes, int pairs, uint64_t seed,
                               cudaStream_t stream);

/// Counts elements where |got - want| > tolerance * (|want| + scale), both read as `element`.
cudaError_t LaunchCompare(GpuElement element, const void* got, const void* want, uint64_t count, float tolerance,
                          float scale, unsigned long long* mismatches, cudaStream_t stream);

/// Adds the squares of the finite ones of `count` elements, read as `element`, to `*sum` (in
/// double, as tensor/compare.h's RootMeanSquare sums them on the host; the order differs).
cudaError_t LaunchSumOfSquares(GpuElement element, const void* data, uint64_t count, double* sum,
                               cudaStream_t stream);

/// Fills `count` elements of `element` (a floating type) with values of `distribution` (the
/// index of tensor/random.h's Distribution) from counter stream (`seed`, `stream_id`): the host's
/// FillRandom computed on the device, then rounded to the element type. Every value changes
/// with the seed, so a timing round on freshly filled inputs sees inputs no earlier call saw.
/// `nonnegative`, `scale` and `offset` are the tensor's InputDraw, applied as FillInput does
/// (|value|, then offset + scale * value, each rounded: the host's bits).
cudaError_t LaunchRandomFill(GpuElement element, void* data, uint64_t count, int distribution, uint64_t seed,
                             uint64_t stream_id, cudaStream_t stream, bool nonnegative = false, float scale = 1.0f,
                             float offset = 0.0f);

/// Fills `count` int32 elements with integers in [low, high) from counter stream (`seed`,
/// `stream_id`): FillInput's integer draw, bit for bit.
cudaError_t LaunchIntegerFill(void* data, uint64_t count, uint64_t seed, uint64_t stream_id, int64_t low,
                              int64_t high, cudaStream_t stream);

/// Adds to `*differing` the number of 8-byte words (and of bytes in the tail past the last
/// whole word) in which `a` and `b` differ; both 8-byte aligned, `bytes` long.
cudaError_t LaunchCountDifferences(const void* a, const void* b, uint64_t bytes, unsigned long long* differing,
                                   cudaStream_t stream);

/// Fills `bytes` (a multiple of 2) with the 4-byte `pattern` repeated.
cudaError_t LaunchFill(void* data, uint64_t bytes, uint32_t pattern, cudaStream_t stream);

}  // namespace ksmith
