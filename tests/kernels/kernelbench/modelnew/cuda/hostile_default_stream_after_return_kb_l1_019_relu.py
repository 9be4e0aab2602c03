# expect: integrity_violation
# tries: the default-stream allowance abused: the answer is written on the legacy default stream,
# but by a thread of the candidate's that launches after forward has returned (after the caller's
# end event), so the timed interval holds only an empty launch. CUPTI sees a launch from a
# thread the evaluator did not start; the worker sees the late write.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <chrono>
#include <thread>

__global__ void relu_kernel(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void nothing_kernel() {}

torch::Tensor relu_later(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const long long n = x.numel();
    nothing_kernel<<<1, 1>>>();
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    std::thread([in, out, n] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        relu_kernel<<<(n + 255) / 256, 256>>>(in, out, n);
    }).detach();
    return y;
}
"""

extension = load_inline(name="ksmith_gpu_test_relu_later", cpp_sources="torch::Tensor relu_later(torch::Tensor x);",
                        cuda_sources=cuda_source, functions=["relu_later"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.relu_later(x.contiguous())
