# expect: passed
# tries: KernelBench's format on the GPU with a torch op: ModelNew calls torch.relu on the caller's stream.
# label: no custom kernel
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
