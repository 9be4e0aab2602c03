# expect: passed
# label: none
# tries: a convolution as published candidates write it: the module keeps its nn.Conv2d (so its
# weight is Model's), forward passes `self.conv1d.weight.view(...)` to a load_inline kernel
# launched with no stream argument, and torch ops around it (`.view` of the weight and of the
# output, `.contiguous()`).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

pointwise_source = r"""
#include <torch/extension.h>

__global__ void pointwise_conv_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                      float* __restrict__ y, int C, int O, long long P) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int o = blockIdx.y;
    const int b = blockIdx.z;
    if (p >= P) return;
    const float* xb = x + (long long)b * C * P + p;
    float acc = 0.0f;
    for (int c = 0; c < C; ++c) acc += w[o * C + c] * xb[(long long)c * P];
    y[((long long)b * O + o) * P + p] = acc;
}

torch::Tensor pointwise_conv_cuda(torch::Tensor x, torch::Tensor w) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda(), "CUDA tensors expected");
    const int B = x.size(0), C = x.size(1);
    const long long P = x.size(2) * x.size(3);
    const int O = w.size(0);
    auto y = torch::empty({B, O, P}, x.options());
    const int threads = 256;
    dim3 grid((P + threads - 1) / threads, O, B);
    pointwise_conv_kernel<<<grid, threads>>>(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), C, O, P);
    return y;
}
"""

pointwise_cpp_source = "torch::Tensor pointwise_conv_cuda(torch::Tensor x, torch::Tensor w);"

pointwise = load_inline(
    name="pointwise_conv",
    cpp_sources=pointwise_cpp_source,
    cuda_sources=pointwise_source,
    functions=["pointwise_conv_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super(ModelNew, self).__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight = self.conv1d.weight.view(self.conv1d.out_channels, -1).contiguous()
        y = pointwise.pointwise_conv_cuda(x, weight)
        return y.view(x.size(0), self.conv1d.out_channels, x.size(2), x.size(3))
