# expect: passed
# label: none
# tries: the commonest KernelBench candidate on the GPU: a CUDA kernel compiled with load_inline
# (nvcc runs in the build sandbox), launched on the caller's stream.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.dtype() == torch::kFloat32 && x.is_contiguous(), "float32 contiguous CUDA input");
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return y;
  const int threads = 256;
  const int blocks = int(std::min<int64_t>((n + threads - 1) / threads, 132 * 32));
  relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""

extension = load_inline(name="ksmith_gpu_test_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                        cuda_sources=cuda_source, functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.relu(x.contiguous())
