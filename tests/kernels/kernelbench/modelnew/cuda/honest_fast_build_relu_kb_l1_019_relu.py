# expect: passed
# label: none
# tries: the form ksmith's own KernelBench prompt asks for, so that a build takes seconds: a `.cu`
# that includes no torch header (cuda_runtime.h, an extern "C" launcher over raw pointers and the
# stream), a binding in cpp_sources with pybind11 alone, no_implicit_headers=True and
# with_pytorch_error_handling=False; forward passes data_ptr()s and the current stream's handle.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <cuda_runtime.h>
#include <cstdint>

__global__ void relu_kernel(const float4* __restrict__ x, float4* __restrict__ y, long long vectors) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < vectors;
       i += (long long)gridDim.x * blockDim.x) {
    float4 v = x[i];
    v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f);
    y[i] = v;
  }
}

__global__ void relu_tail(const float* __restrict__ x, float* __restrict__ y, long long start, long long n) {
  long long i = start + blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

extern "C" int relu_launch(std::uintptr_t x, std::uintptr_t y, long long n, std::uintptr_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  const long long vectors = n / 4;
  if (vectors > 0) {
    const long long blocks = vectors < 132LL * 32 * 4 ? (vectors + 255) / 256 : 132LL * 32;
    relu_kernel<<<(unsigned)blocks, 256, 0, s>>>(reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y),
                                                 vectors);
  }
  if (n > vectors * 4) {
    relu_tail<<<1, 256, 0, s>>>(reinterpret_cast<const float*>(x), reinterpret_cast<float*>(y), vectors * 4, n);
  }
  return static_cast<int>(cudaGetLastError());
}
"""

cpp_source = r"""
#include <pybind11/pybind11.h>
#include <cstdint>
#include <stdexcept>
#include <string>

extern "C" int relu_launch(std::uintptr_t x, std::uintptr_t y, long long n, std::uintptr_t stream);

void relu(std::uintptr_t x, std::uintptr_t y, long long n, std::uintptr_t stream) {
  const int error = relu_launch(x, y, n, stream);
  if (error != 0) throw std::runtime_error("relu launch failed: CUDA error " + std::to_string(error));
}
"""

relu_module = load_inline(
    name="fast_build_relu",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu"],
    no_implicit_headers=True,
    with_pytorch_error_handling=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        # float4 loads need 16-byte alignment: torch's allocations are 256-byte aligned.
        relu_module.relu(x.data_ptr(), y.data_ptr(), x.numel(), torch.cuda.current_stream().cuda_stream)
        return y
