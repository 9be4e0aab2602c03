# expect: integrity_violation
# tries: `<<<grid, block>>>` built with `--default-stream per-thread`: the launch goes to the
# per-thread default stream, which the caller's stream does not synchronize with (only the legacy
# default stream does), so the work is not ordered with the caller's: another stream to CUPTI.
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
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

extension = load_inline(name="ksmith_gpu_test_per_thread_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                        cuda_sources=cuda_source, functions=["relu"],
                        extra_cuda_cflags=["--default-stream", "per-thread"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.relu(x.contiguous())
