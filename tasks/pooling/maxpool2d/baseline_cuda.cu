// CUDA baseline: what `torch.nn.functional.max_pool2d(x, (kh, kw))` costs in PyTorch eager: it
// calls max_pool2d_with_indices, whose max_pool_forward_nchw kernel gives each output element a
// thread (256 per block), takes the fp32 max over the window (`val > max || isnan(val)`) and
// writes it and its int64 index. The indices go to a temporary kept across calls and grown only
// when too small, as PyTorch's caching allocator would hand it out.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

// The cached temporary: grown (never shrunk) when a call needs more.
int64_t* Scratch(size_t elements) {
  static int64_t* buffer = nullptr;
  static size_t capacity = 0;
  if (elements > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, elements * sizeof(int64_t)) != cudaSuccess) return nullptr;
    capacity = elements;
  }
  return buffer;
}

// Index is int while every offset fits (PyTorch's kernel computes in int), else int64_t.
template <typename Index>
__global__ void MaxPoolForwardNchw(const float* x, float* y, int64_t* indices, Index total, Index h,
                                   Index w, Index kh, Index kw, Index oh, Index ow) {
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index e = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const Index j = e % ow;
    const Index i = (e / ow) % oh;
    const Index plane = e / ow / oh;
    const Index hstart = i * kh;
    const Index wstart = j * kw;
    const Index hend = min(hstart + kh, h);
    const Index wend = min(wstart + kw, w);
    const float* xp = x + static_cast<int64_t>(plane) * h * w;
    float max_value = -INFINITY;
    Index max_index = hstart * w + wstart;
    for (Index p = hstart; p < hend; ++p) {
      for (Index q = wstart; q < wend; ++q) {
        const float v = xp[p * w + q];
        if (v > max_value || isnan(v)) {
          max_index = p * w + q;
          max_value = v;
        }
      }
    }
    y[e] = max_value;
    indices[e] = max_index;
  }
}

}  // namespace

extern "C" void maxpool2d(const float* x, float* y, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t kh, int64_t kw, int64_t oh, int64_t ow, cudaStream_t stream) {
  const int64_t total = n * c * oh * ow;
  if (total <= 0) return;
  int64_t* indices = Scratch(static_cast<size_t>(total));
  if (indices == nullptr) {
    std::fprintf(stderr, "maxpool2d baseline: cudaMalloc of the index temporary failed\n");
    return;
  }
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 30);
  if (n * c * h * w <= INT32_MAX && total + static_cast<int64_t>(blocks) * kThreads <= INT32_MAX) {
    MaxPoolForwardNchw<int><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        x, y, indices, static_cast<int>(total), static_cast<int>(h), static_cast<int>(w),
        static_cast<int>(kh), static_cast<int>(kw), static_cast<int>(oh), static_cast<int>(ow));
  } else {
    MaxPoolForwardNchw<int64_t><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        x, y, indices, total, h, w, kh, kw, oh, ow);
  }
}
