// Trusted GPU reference: non-overlapping kh x kw max pooling in double, the same math as
// reference.cc. One thread per output element, grid-stride over all of them with 64-bit indices.
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

__global__ void MaxPool2dReference(const float* x, double* y, int64_t planes, int64_t h, int64_t w,
                                   int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const int64_t total = planes * oh * ow;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t j = e % ow;
    const int64_t i = (e / ow) % oh;
    const int64_t plane = e / (ow * oh);
    const float* xp = x + plane * h * w;
    double best = xp[(i * kh) * w + j * kw];
    for (int64_t p = 0; p < kh; ++p) {
      for (int64_t q = 0; q < kw; ++q) {
        const double v = xp[(i * kh + p) * w + j * kw + q];
        if (v > best) best = v;
      }
    }
    y[e] = best;
  }
}

}  // namespace

extern "C" void maxpool2d_reference_cuda(const float* x, double* y, int64_t n, int64_t c, int64_t h,
                                         int64_t w, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                                         cudaStream_t stream) {
  const int64_t total = n * c * oh * ow;
  if (total <= 0) return;
  constexpr int kThreads = 256;
  // The grid-stride loop covers any size; the cap only bounds the launch.
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 20);
  MaxPool2dReference<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, n * c, h, w, kh, kw,
                                                                               oh, ow);
}
