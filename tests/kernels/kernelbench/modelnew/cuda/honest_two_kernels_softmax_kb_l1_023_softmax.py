# expect: passed
# label: none
# tries: a softmax written as published candidates write it: two kernels in one forward (per-row
# max and sum of exponentials into a workspace, then the normalization), both launched with no
# stream argument, `cudaGetLastError()` checked after each launch, `.contiguous()`, TORCH_CHECKs,
# torch::empty for the workspace, block reductions in shared memory.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void row_stats_kernel(const float* x, float* row_max, float* row_sum, int cols) {
    extern __shared__ float shared[];
    const int row = blockIdx.x;
    const float* x_row = x + (long long)row * cols;
    float local_max = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) local_max = fmaxf(local_max, x_row[i]);
    shared[threadIdx.x] = local_max;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    const float max_val = shared[0];
    __syncthreads();
    float local_sum = 0.0f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) local_sum += expf(x_row[i] - max_val);
    shared[threadIdx.x] = local_sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        row_max[row] = max_val;
        row_sum[row] = shared[0];
    }
}

__global__ void normalize_kernel(const float* x, const float* row_max, const float* row_sum, float* y, int cols) {
    const int row = blockIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < cols) {
        const long long offset = (long long)row * cols + col;
        y[offset] = expf(x[offset] - row_max[row]) / row_sum[row];
    }
}

torch::Tensor softmax_cuda(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2D");
    x = x.contiguous();
    const int rows = x.size(0);
    const int cols = x.size(1);
    auto y = torch::empty_like(x);
    auto row_max = torch::empty({rows}, x.options());
    auto row_sum = torch::empty({rows}, x.options());
    const int threads = 512;
    row_stats_kernel<<<rows, threads, threads * sizeof(float)>>>(
        x.data_ptr<float>(), row_max.data_ptr<float>(), row_sum.data_ptr<float>(), cols);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "row_stats_kernel failed: ", cudaGetErrorString(err));
    dim3 grid((cols + 255) / 256, rows);
    normalize_kernel<<<grid, 256>>>(x.data_ptr<float>(), row_max.data_ptr<float>(), row_sum.data_ptr<float>(),
                                    y.data_ptr<float>(), cols);
    err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "normalize_kernel failed: ", cudaGetErrorString(err));
    return y;
}
"""

softmax_cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x);"

softmax_module = load_inline(
    name="softmax_two_kernels",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_source,
    functions=["softmax_cuda"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.softmax = softmax_module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.softmax.softmax_cuda(x)
