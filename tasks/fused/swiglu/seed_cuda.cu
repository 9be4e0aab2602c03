// Tuner seed for swiglu on a GPU: one kernel, y = silu(gate) * up with no temporary. A grid-stride
// loop over groups of VECTOR consecutive elements of y; with VECTOR 4 (cols a multiple of 4 and
// every pointer 16-byte aligned, so every row's gate and up halves are too) a thread moves
// float4s. A group never crosses a row (cols is a multiple of the group size), so one row/column
// split per group finds both halves.
#include <cstdint>
#include <cuda_runtime.h>
#include <ksmith/launch.h>

// @tune THREADS: 128, 256, 512
#ifndef THREADS
#define THREADS 256
#endif

// @tune VECTOR: 1, 4
#ifndef VECTOR
#define VECTOR 4
#endif

#ifdef KSMITH_DEVICE
namespace {

// v / (1 + exp(-v)): for v below about -88 expf overflows to infinity and the quotient is the
// exact limit -0; __expf would be faster but less accurate.
__device__ __forceinline__ float Silu(float v) { return v / (1.0f + expf(-v)); }

template <int kVector>
__global__ void __launch_bounds__(THREADS)
    Swiglu(const float* x, float* y, int64_t rows, int64_t cols, int64_t two_cols) {
  const int64_t groups_per_row = cols / kVector;
  const int64_t groups = rows * groups_per_row;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * THREADS;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * THREADS + threadIdx.x; g < groups; g += stride) {
    const int64_t r = g / groups_per_row;
    const int64_t c = (g - r * groups_per_row) * kVector;
    const float* gate = x + r * two_cols + c;
    float* out = y + r * cols + c;
    if constexpr (kVector == 4) {
      const float4 a = *reinterpret_cast<const float4*>(gate);
      const float4 b = *reinterpret_cast<const float4*>(gate + cols);
      *reinterpret_cast<float4*>(out) =
          make_float4(Silu(a.x) * b.x, Silu(a.y) * b.y, Silu(a.z) * b.z, Silu(a.w) * b.w);
    } else {
      out[0] = Silu(gate[0]) * gate[cols];
    }
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

unsigned Blocks(int64_t groups) {
  const int64_t needed = (groups + THREADS - 1) / THREADS;
  return static_cast<unsigned>(std::min<int64_t>(needed, int64_t{1} << 30));
}

}  // namespace

extern "C" void swiglu(const float* x, float* y, int64_t rows, int64_t cols, int64_t two_cols,
                       cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (VECTOR == 4 && cols % 4 == 0 && Aligned(x) && Aligned(y)) {
    KSMITH_LAUNCH(Blocks(rows * (cols / 4)), THREADS, 0, stream, Swiglu<4>)(x, y, rows, cols, two_cols);
  } else {
    KSMITH_LAUNCH(Blocks(rows * cols), THREADS, 0, stream, Swiglu<1>)(x, y, rows, cols, two_cols);
  }
}
#endif  // KSMITH_HOST
