# expect: passed
# label: none
# tries: a reduction as published candidates write it: one thread per output element summing the
# reduced dimension in a plain loop, built with extra_cuda_cflags=["-O3", "--use_fast_math"],
# launched with no stream argument, and `cudaDeviceSynchronize()` inside forward (so the timing
# falls back to samples that include launch latency, for both sides).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

sum_source = r"""
#include <torch/extension.h>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void sum_dim1_kernel(const float* __restrict__ x, float* __restrict__ out,
                                int outer, int reduce, int inner) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    int o = idx / inner;
    int i = idx % inner;
    const float* base = x + (long long)o * reduce * inner + i;
    float acc = 0.0f;
    for (int r = 0; r < reduce; ++r) {
        acc += base[(long long)r * inner];
    }
    out[idx] = acc;
}

torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be on CUDA");
    auto xc = x.contiguous();
    auto sizes = xc.sizes().vec();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= sizes[d];
    for (int64_t d = dim + 1; d < (int64_t)sizes.size(); ++d) inner *= sizes[d];
    int64_t reduce = sizes[dim];
    sizes[dim] = 1;
    auto out = torch::empty(sizes, xc.options());
    int total = outer * inner;
    int threads = 256;
    int blocks = (total + threads - 1) / threads;
    sum_dim1_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), outer, reduce, inner);
    cudaDeviceSynchronize();
    return out;
}
"""

sum_cpp_source = "torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim);"

sum_module = load_inline(
    name="sum_dim",
    cpp_sources=sum_cpp_source,
    cuda_sources=sum_source,
    functions=["sum_dim_cuda"],
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_module.sum_dim_cuda(x, self.dim)
