# expect: passed
# label: none
# tries: a row softmax in CUDA through load_inline: one block per row, three passes (max, sum of
# exponentials, write), block reductions through warp shuffles.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

template <bool kMax>
__device__ float BlockReduce(float value, float* shared) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = kMax ? fmaxf(value, other) : value + other;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < int(blockDim.x >> 5) ? shared[lane] : (kMax ? -INFINITY : 0.0f);
    for (int offset = 16; offset > 0; offset >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, value, offset);
      value = kMax ? fmaxf(value, other) : value + other;
    }
    if (lane == 0) shared[32] = value;
  }
  __syncthreads();
  const float result = shared[32];
  __syncthreads();
  return result;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t columns) {
  __shared__ float shared[33];
  const float* row = x + int64_t(blockIdx.x) * columns;
  float* out = y + int64_t(blockIdx.x) * columns;
  float largest = -INFINITY;
  for (int64_t i = threadIdx.x; i < columns; i += blockDim.x) largest = fmaxf(largest, row[i]);
  largest = BlockReduce<true>(largest, shared);
  float total = 0.0f;
  for (int64_t i = threadIdx.x; i < columns; i += blockDim.x) total += __expf(row[i] - largest);
  total = BlockReduce<false>(total, shared);
  const float scale = 1.0f / total;
  for (int64_t i = threadIdx.x; i < columns; i += blockDim.x) out[i] = __expf(row[i] - largest) * scale;
}

torch::Tensor softmax(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.dtype() == torch::kFloat32, "2-D float32 CUDA input");
  auto input = x.contiguous();
  auto y = torch::empty_like(input);
  if (input.size(0) == 0) return y;
  softmax_rows<<<unsigned(input.size(0)), 1024, 0, at::cuda::getCurrentCUDAStream()>>>(
      input.data_ptr<float>(), y.data_ptr<float>(), input.size(1));
  return y;
}
"""

extension = load_inline(name="ksmith_gpu_test_softmax", cpp_sources="torch::Tensor softmax(torch::Tensor x);",
                        cuda_sources=cuda_source, functions=["softmax"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.softmax(x)
