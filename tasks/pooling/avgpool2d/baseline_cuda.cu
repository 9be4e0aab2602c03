// CUDA baseline: what `torch.nn.functional.avg_pool2d(x, (kh, kw))` costs in PyTorch eager: its
// avg_pool2d_out_cuda_frame kernel gives each output element a thread (1024 per block), sums the
// window in fp32 and divides by the window size (count_include_pad; no padding here, so kh * kw).
#include <algorithm>
#include <climits>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 1024;

// Index is int while every offset fits (PyTorch's kernel then computes in int), else int64_t.
template <typename Index>
__global__ void AvgPool2dOutCudaFrame(const float* x, float* y, Index total, Index h, Index w, Index kh,
                                      Index kw, Index oh, Index ow) {
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index e = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const Index j = e % ow;
    const Index i = (e / ow) % oh;
    const Index plane = e / ow / oh;
    const Index hstart = i * kh;
    const Index wstart = j * kw;
    const Index hend = min(hstart + kh, h);
    const Index wend = min(wstart + kw, w);
    const Index pool_size = (hend - hstart) * (wend - wstart);
    const float* xp = x + static_cast<int64_t>(plane) * h * w;
    float sum = 0.0f;
    for (Index p = hstart; p < hend; ++p) {
      for (Index q = wstart; q < wend; ++q) sum += xp[p * w + q];
    }
    y[e] = sum / static_cast<float>(pool_size);
  }
}

}  // namespace

extern "C" void avgpool2d(const float* x, float* y, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t kh, int64_t kw, int64_t oh, int64_t ow, cudaStream_t stream) {
  const int64_t total = n * c * oh * ow;
  if (total <= 0) return;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 30);
  if (n * c * h * w <= INT32_MAX && total + static_cast<int64_t>(blocks) * kThreads <= INT32_MAX) {
    AvgPool2dOutCudaFrame<int><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        x, y, static_cast<int>(total), static_cast<int>(h), static_cast<int>(w), static_cast<int>(kh),
        static_cast<int>(kw), static_cast<int>(oh), static_cast<int>(ow));
  } else {
    AvgPool2dOutCudaFrame<int64_t><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        x, y, total, h, w, kh, kw, oh, ow);
  }
}
