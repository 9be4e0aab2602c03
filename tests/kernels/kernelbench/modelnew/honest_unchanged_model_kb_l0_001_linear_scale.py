# expect: passed
# tries: the problem's own Model as ModelNew (KernelBench's "unchanged model"), importing torch
# submodules on the way: importing is not a change of process state.
import torch
import torch.nn as nn
import torch.utils.cpp_extension  # noqa: F401
import torch.fx  # noqa: F401


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.relu(self.linear(x)) * self.scale
