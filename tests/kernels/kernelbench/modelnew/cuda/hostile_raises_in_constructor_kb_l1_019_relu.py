# expect: compile_error
# reason: the candidate could not be built: ModelNew(*get_init_inputs()) raised RuntimeError: no kernel for this device
# tries: a constructor that raises where the worker builds it (the build sandbox only warns): KernelBench's
# "compiled: false", not an aborted worker.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        raise RuntimeError("no kernel for this device")

    def forward(self, x):
        return torch.relu(x)
