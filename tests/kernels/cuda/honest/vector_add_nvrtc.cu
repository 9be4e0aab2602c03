// Honest fast vector_add in the NVRTC form: vector_add_fast.cu's code, its device part built by NVRTC.
// Float4 loads and stores when every pointer is 16-byte aligned (the tail of
// fewer than 4 elements done by the first threads), a scalar path otherwise, grid-stride loops
// sized to fill the device once.
#include <cstdint>
#include <ksmith/launch.h>

constexpr int kThreads = 256;

#ifdef KSMITH_DEVICE
namespace {

__device__ __forceinline__ float Op(float p, float q) { return p + q; }

__global__ void Vectorized(const float4* __restrict__ a, const float4* __restrict__ b,
                           float4* __restrict__ c, int64_t n) {
  const int64_t n4 = n / 4;
  const int64_t id = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = id; i < n4; i += stride) {
    const float4 p = a[i];
    const float4 q = b[i];
    c[i] = make_float4(Op(p.x, q.x), Op(p.y, q.y), Op(p.z, q.z), Op(p.w, q.w));
  }
  const int64_t tail = n4 * 4 + id;
  if (tail < n) {
    reinterpret_cast<float*>(c)[tail] =
        Op(reinterpret_cast<const float*>(a)[tail], reinterpret_cast<const float*>(b)[tail]);
  }
}

__global__ void Scalar(const float* __restrict__ a, const float* __restrict__ b,
                       float* __restrict__ c, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    c[i] = Op(a[i], b[i]);
  }
}

}  // namespace
#endif  // KSMITH_DEVICE

#ifdef KSMITH_HOST
#include <algorithm>

#include <cuda_runtime.h>

namespace {

bool Aligned(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

// Enough blocks of 256 threads to fill every SM 8 times over, and no more: the loops do the rest.
int64_t Blocks(int64_t work) {
  static const int64_t sms = [] {
    int device = 0;
    int count = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
    return static_cast<int64_t>(count > 0 ? count : 132);
  }();
  return std::max<int64_t>(1, std::min<int64_t>((work + kThreads - 1) / kThreads, sms * 8));
}

}  // namespace

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  if (Aligned(a) && Aligned(b) && Aligned(c)) {
    const auto blocks = static_cast<unsigned>(Blocks(std::max<int64_t>(n / 4, 1)));
    KSMITH_LAUNCH(blocks, kThreads, 0, stream, Vectorized)(reinterpret_cast<const float4*>(a),
                                                reinterpret_cast<const float4*>(b),
                                                reinterpret_cast<float4*>(c), n);
  } else {
    KSMITH_LAUNCH(static_cast<unsigned>(Blocks(n)), kThreads, 0, stream, Scalar)(a, b, c, n);
  }
}
#endif  // KSMITH_HOST
