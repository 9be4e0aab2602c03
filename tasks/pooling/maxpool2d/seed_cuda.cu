// Tuner seed for maxpool2d on a GPU (non-overlapping kh x kw windows, stride = window): one thread
// per output element, consecutive threads on consecutive outputs of a row, so a warp reads each
// input row of its windows as one contiguous span. The output index is split into (row, column)
// with 32-bit divisions whenever every offset fits, which is much cheaper than 64-bit ones. With
// VECTOR 2, an even kw and an even w, the window's columns are read as float2 pairs.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune THREADS: 128, 256, 512
#ifndef THREADS
#define THREADS 256
#endif

// @tune VECTOR: 1, 2
#ifndef VECTOR
#define VECTOR 2
#endif

#ifdef KSMITH_DEVICE
namespace {

template <typename Index, int kVector>
__global__ void __launch_bounds__(THREADS)
    MaxPool2d(const float* x, float* y, Index total, Index h, Index w, Index kh, Index kw, Index oh,
              Index ow) {
  const Index stride = static_cast<Index>(gridDim.x) * THREADS;
  for (Index e = static_cast<Index>(blockIdx.x) * THREADS + threadIdx.x; e < total; e += stride) {
    const Index r = e / ow;  // output row: plane * oh + i
    const Index j = e - r * ow;
    const Index plane = r / oh;
    const Index i = r - plane * oh;
    // The window's top-left input element; every index below it stays inside the input.
    const float* window = x + (plane * h + i * kh) * w + j * kw;
    float best = window[0];
    for (Index p = 0; p < kh; ++p) {
      const float* row = window + p * w;
      if constexpr (kVector == 2) {
        for (Index q = 0; q < kw / 2; ++q) {
          const float2 v = reinterpret_cast<const float2*>(row)[q];
          best = fmaxf(best, fmaxf(v.x, v.y));
        }
      } else {
        for (Index q = 0; q < kw; ++q) best = fmaxf(best, row[q]);
      }
    }
    y[e] = best;
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>
#include <type_traits>

namespace {

template <typename Index>
void Launch(const float* x, float* y, int64_t total, int64_t h, int64_t w, int64_t kh, int64_t kw,
            int64_t oh, int64_t ow, bool vector, unsigned blocks, cudaStream_t stream) {
  const auto i = [](int64_t v) { return static_cast<Index>(v); };
  // NVRTC compiles the kernels that launches name as written: one launch per instantiation.
  constexpr bool k32 = std::is_same_v<Index, uint32_t>;
  if (vector && k32) KSMITH_LAUNCH(blocks, THREADS, 0, stream, MaxPool2d<uint32_t, 2>)(x, y, i(total), i(h), i(w), i(kh), i(kw), i(oh), i(ow));
  if (vector && !k32) KSMITH_LAUNCH(blocks, THREADS, 0, stream, MaxPool2d<int64_t, 2>)(x, y, i(total), i(h), i(w), i(kh), i(kw), i(oh), i(ow));
  if (!vector && k32) KSMITH_LAUNCH(blocks, THREADS, 0, stream, MaxPool2d<uint32_t, 1>)(x, y, i(total), i(h), i(w), i(kh), i(kw), i(oh), i(ow));
  if (!vector && !k32) KSMITH_LAUNCH(blocks, THREADS, 0, stream, MaxPool2d<int64_t, 1>)(x, y, i(total), i(h), i(w), i(kh), i(kw), i(oh), i(ow));
}

}  // namespace

extern "C" void maxpool2d(const float* x, float* y, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t kh, int64_t kw, int64_t oh, int64_t ow, cudaStream_t stream) {
  const int64_t total = n * c * oh * ow;
  if (total <= 0) return;
  const int64_t needed = (total + THREADS - 1) / THREADS;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(needed, int64_t{1} << 30));
  // float2 pairs stay 8-byte aligned when x is and kw and w are even.
  const bool vector =
      VECTOR == 2 && kw % 2 == 0 && w % 2 == 0 && reinterpret_cast<uintptr_t>(x) % 8 == 0;
  // 32-bit indices while every input offset, and every output index plus one grid stride, fits.
  const int64_t limit = int64_t{1} << 31;
  if (n * c * h * w < limit && total + int64_t{blocks} * THREADS < limit) {
    Launch<uint32_t>(x, y, total, h, w, kh, kw, oh, ow, vector, blocks, stream);
  } else {
    Launch<int64_t>(x, y, total, h, w, kh, kw, oh, ow, vector, blocks, stream);
  }
}
#endif  // KSMITH_HOST
