# expect: passed
# static: no_kernel_code
# tries: KernelBench's format with torch ops only: its own weight and bias names, fused as addmm.
# label: no custom kernel
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.scale = scale

    def forward(self, x):
        return torch.relu(torch.addmm(self.bias, x, self.weight.t())) * self.scale
