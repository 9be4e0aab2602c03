// Trusted GPU reference: depthwise conv2d in double, the same math as reference.cc (for each
// output the sum over r, then s, in increasing order of x[b, ch, i + r, j + s] * wt[ch, r, s]).
// One thread per output element, walked with a grid-stride loop: the window is tiny (at most
// 7 x 7) and its reads hit L1.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

__global__ void DepthwiseConv2dReference(const float* x, const float* wt, double* y, int64_t n,
                                         int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw,
                                         int64_t oh, int64_t ow) {
  const int64_t total = n * c * oh * ow;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t j = e % ow;
    const int64_t i = (e / ow) % oh;
    const int64_t plane = e / (ow * oh);  // b * c + ch
    const int64_t ch = plane % c;
    const float* xp = x + (plane * h + i) * w + j;
    const float* wp = wt + ch * kh * kw;
    double sum = 0.0;
    for (int64_t r = 0; r < kh; ++r) {
      for (int64_t s = 0; s < kw; ++s) {
        sum += static_cast<double>(xp[r * w + s]) * wp[r * kw + s];
      }
    }
    y[e] = sum;
  }
}

}  // namespace

extern "C" void depthwise_conv2d_reference_cuda(const float* x, const float* wt, double* y,
                                                int64_t n, int64_t c, int64_t h, int64_t w,
                                                int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                                cudaStream_t stream) {
  const int64_t total = n * c * oh * ow;
  if (total <= 0) return;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 20);
  DepthwiseConv2dReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      x, wt, y, n, c, h, w, kh, kw, oh, ow);
}
