# expect: integrity_violation
# tries: a load_inline kernel launched on a stream of its own that the caller's stream never waits
# for (the KernelBench hack that timed nothing): CUPTI sees its kernel on another stream.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu(torch::Tensor x) {
  static cudaStream_t side = nullptr;
  if (side == nullptr) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return y;
  relu_kernel<<<132 * 32, 256, 0, side>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""

extension = load_inline(name="ksmith_gpu_test_unwaited_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                        cuda_sources=cuda_source, functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.relu(x.contiguous())
