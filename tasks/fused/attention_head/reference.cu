// Trusted GPU reference: o = softmax(q k^T / sqrt(d)) v in double, the same math as reference.cc
// (scores dot / sqrt(d), the row max M, weights exp(a - M) summed, o = sum_j e_j v_j / sum). A warp
// owns a query row: its lanes split the d columns, so a score is a warp-wide dot product reduced
// with shuffles. One pass finds M; a second recomputes each score, sums exp(a - M) and
// accumulates e_j v[j, c] in registers for up to 128 columns at a time (a wider d takes one
// pass per 128 columns), then o = acc / sum. No library, so that the reference shares no code
// with the baseline.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kThreads = 32 * kWarpsPerBlock;
constexpr int kColsPerLane = 4;              // register accumulators per lane
constexpr int kChunk = 32 * kColsPerLane;    // columns of o per pass

// The score of query row qi against key row kj, the same on every lane.
__device__ __forceinline__ double Score(const float* qi, const float* kj, int64_t d, double scale, int lane) {
  double dot = 0.0;
  for (int64_t c = lane; c < d; c += 32) dot += static_cast<double>(qi[c]) * kj[c];
  for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
  return dot * scale;
}

__global__ void AttentionHeadReference(const float* q, const float* k, const float* v, double* o,
                                       int64_t s, int64_t t, int64_t d) {
  const int lane = threadIdx.x % 32;
  const double scale = 1.0 / sqrt(static_cast<double>(d));
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; i < s; i += warps) {
    const float* qi = q + i * d;
    double mx = -INFINITY;
    for (int64_t j = 0; j < t; ++j) mx = fmax(mx, Score(qi, k + j * d, d, scale, lane));
    for (int64_t c0 = 0; c0 < d; c0 += kChunk) {
      double acc[kColsPerLane] = {};
      double sum = 0.0;
      for (int64_t j = 0; j < t; ++j) {
        const double e = exp(Score(qi, k + j * d, d, scale, lane) - mx);
        sum += e;
        const float* vj = v + j * d;
        for (int r = 0; r < kColsPerLane; ++r) {
          const int64_t c = c0 + lane + 32 * r;
          if (c < d) acc[r] += e * vj[c];
        }
      }
      for (int r = 0; r < kColsPerLane; ++r) {
        const int64_t c = c0 + lane + 32 * r;
        if (c < d) o[i * d + c] = acc[r] / sum;
      }
    }
  }
}

}  // namespace

extern "C" void attention_head_reference_cuda(const float* q, const float* k, const float* v, double* o,
                                              int64_t s, int64_t t, int64_t d, cudaStream_t stream) {
  if (s <= 0 || t <= 0 || d <= 0) return;
  // The row loop covers any s; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>((s + kWarpsPerBlock - 1) / kWarpsPerBlock, int64_t{1} << 20);
  AttentionHeadReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(q, k, v, o, s, t, d);
}
