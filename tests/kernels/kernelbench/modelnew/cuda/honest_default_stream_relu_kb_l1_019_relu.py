# expect: passed
# label: none
# tries: the commonest published KernelBench candidate: a load_inline kernel launched with no
# stream argument (`<<<blocks, threads>>>`, so on the legacy default stream, which KernelBench and
# PyTorch run forward beside), with torch/extension.h in the .cu, TORCH_CHECKs, torch::empty_like,
# C10_CUDA_KERNEL_LAUNCH_CHECK() after the launch, a flattened view in and a view back out.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_kernel(const float* input, float* output, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) {
        output[idx] = input[idx] > 0.0f ? input[idx] : 0.0f;
    }
}

torch::Tensor relu_cuda(torch::Tensor input) {
    TORCH_CHECK(input.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(input.is_contiguous(), "input must be contiguous");
    auto output = torch::empty_like(input);
    int size = input.numel();
    const int block_size = 256;
    const int num_blocks = (size + block_size - 1) / block_size;
    relu_kernel<<<num_blocks, block_size>>>(input.data_ptr<float>(), output.data_ptr<float>(), size);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return output;
}
"""

relu_cpp_source = "torch::Tensor relu_cuda(torch::Tensor input);"

relu = load_inline(
    name="relu",
    cpp_sources=relu_cpp_source,
    cuda_sources=relu_source,
    functions=["relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.relu = relu

    def forward(self, x):
        flat = x.contiguous().view(-1)
        return self.relu.relu_cuda(flat).view(x.shape)
