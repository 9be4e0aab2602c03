# expect: passed
# static: none
# tries: the commonest KernelBench candidate, a C++ extension compiled with load_inline at import:
# label: none
# built in the build sandbox (which may run the compiler), loaded by the worker (which may not).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor half_log(torch::Tensor x) {
  TORCH_CHECK(x.dtype() == torch::kFloat32 && x.is_contiguous(), "float32 contiguous input expected");
  auto out = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* result = out.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) result[i] = 0.5f * std::log(in[i] + 1e-3f);
  return out;
}
"""

half_log = load_inline(name="ksmith_test_half_log", cpp_sources=[cpp_source], functions=["half_log"],
                       extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return half_log.half_log(x.contiguous())
