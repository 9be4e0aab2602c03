# expect: compile_error
# reason: does not build
# tries: an extension with a C++ error: the build sandbox's compiler rejects it and the verdict
# carries its message, as KernelBench's "compiled: false".
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
torch::Tensor half_log(torch::Tensor x) { return undefined_function_of_this_candidate(x); }
"""

extension = load_inline(name="ksmith_test_broken", cpp_sources=[cpp_source], functions=["half_log"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.half_log(x)
