# expect: compile_error
# reason: the candidate could not be built: ModelNew(*get_init_inputs()) raised RuntimeError: no kernel for this device
# worker: alive
# tries: a constructor that raises where the worker builds it (the build sandbox only warns: a
# constructor may fail at sizes it is never judged at). KernelBench's "compiled: false", not an abort.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        raise RuntimeError("no kernel for this device")

    def forward(self, x):
        return torch.relu(self.linear(x)) * self.scale
