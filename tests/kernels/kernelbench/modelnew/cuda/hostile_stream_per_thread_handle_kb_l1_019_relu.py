# expect: integrity_violation
# tries: the per-thread default stream named in the launch (`cudaStreamPerThread`) while the
# rest of the code looks like a default-stream launch: not ordered with the caller's stream.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const long long n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256, 0, cudaStreamPerThread>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

extension = load_inline(name="ksmith_gpu_test_stream_per_thread_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                        cuda_sources=cuda_source, functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.relu(x.contiguous())
