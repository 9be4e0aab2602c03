# expect: compile_error
# reason: importing the candidate raised RuntimeError: this load_inline call was not made when the candidate was built
# tries: an extension whose source is written at run time (here from the clock), so that the code
# the worker would load is not the code the build sandbox compiled: the worker cannot compile, and
# nothing was built for this source. Its import raises in the worker: KernelBench's "compiled: false".
import time

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = "// built at %f\n" % time.time() + r"""
#include <torch/extension.h>
torch::Tensor half_log(torch::Tensor x) { return torch::log(x + 1e-3) * 0.5; }
"""

extension = load_inline(name="ksmith_test_varying_source", cpp_sources=[cpp_source], functions=["half_log"])


class ModelNew(nn.Module):
    def forward(self, x):
        return extension.half_log(x)
