# expect: compile_error
# reason: ModelNew's parameters do not match Model's (conv1d.weight [
# reason: it has [('weight', [
# tries: a GEMM-style pointwise convolution that keeps its weight as an [out, in] matrix: it cannot take
# Model's [out, in, 1, 1] conv1d.weight, so there are no weights to judge it with. A verdict naming
# both lists, not an aborted worker.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, bias=False):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels))

    def forward(self, x):
        return torch.einsum("oc,bchw->bohw", self.weight, x)
