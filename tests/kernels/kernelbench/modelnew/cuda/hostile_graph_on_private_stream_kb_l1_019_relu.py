# expect: integrity_violation
# tries: a CUDA graph replayed on a private non-blocking stream the caller never waits for: the
# graph holds the real kernel, the caller's stream only a default-stream no-op, so the timer
# would see nothing. CUPTI sees the graph's kernel on another stream.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void nothing_kernel() {}

torch::Tensor relu(torch::Tensor x) {
    static cudaStream_t side = nullptr;
    if (side == nullptr) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    auto y = torch::empty_like(x);
    const long long n = x.numel();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal);
    relu_kernel<<<(n + 255) / 256, 256, 0, side>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    cudaStreamEndCapture(side, &graph);
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphLaunch(exec, side);
    nothing_kernel<<<1, 1>>>();
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return y;
}
"""

extension = load_inline(name="ksmith_gpu_test_graph_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                        cuda_sources=cuda_source, functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.relu(x.contiguous())
