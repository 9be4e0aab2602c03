// CUDA baseline: what `F.conv2d(x, wt.unsqueeze(1), groups=c)` costs in PyTorch eager without
// cuDNN: its conv_depthwise2d_forward_kernel, one thread per output element (a grid-stride loop
// over n*c*oh*ow), the kh x kw window read from global memory (L1-cached) and summed in fp32.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

__global__ void DepthwiseConv2d(const float* __restrict__ x, const float* __restrict__ wt,
                                float* __restrict__ y, int64_t n, int64_t c, int64_t h, int64_t w,
                                int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const int64_t total = n * c * oh * ow;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t j = e % ow;
    const int64_t i = (e / ow) % oh;
    const int64_t plane = e / (ow * oh);  // b * c + ch
    const int64_t ch = plane % c;
    const float* xp = x + (plane * h + i) * w + j;
    const float* wp = wt + ch * kh * kw;
    float sum = 0.0f;
    for (int64_t r = 0; r < kh; ++r) {
      for (int64_t s = 0; s < kw; ++s) sum += xp[r * w + s] * wp[r * kw + s];
    }
    y[e] = sum;
  }
}

}  // namespace

extern "C" void depthwise_conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t c,
                                 int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t oh,
                                 int64_t ow, cudaStream_t stream) {
  const int64_t total = n * c * oh * ow;
  if (total <= 0) return;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 30);
  DepthwiseConv2d<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, wt, y, n, c, h, w, kh,
                                                                          kw, oh, ow);
}
