# expect: integrity_violation
# static: monkeypatch
# tries: at import, replaces torch.relu and torch.nn.Linear.forward with slow versions (sleeping
# 20 ms) and time.perf_counter with a frozen clock, so that the baseline beside it in the worker
# looks slow; computes the right answer itself. ksmith undoes each change before the baseline runs
# and fails the candidate for making it, as it does a C++ candidate that changes process state.
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

_relu, _linear_forward = torch.relu, nn.Linear.forward


def _slow_relu(x):
    time.sleep(0.02)
    return _relu(x)


def _slow_linear_forward(self, x):
    time.sleep(0.02)
    return _linear_forward(self, x)


torch.relu = _slow_relu
nn.Linear.forward = _slow_linear_forward
time.perf_counter = lambda: 0.0


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.scale = scale

    def forward(self, x):
        return F.relu(F.linear(x, self.weight, self.bias)) * self.scale
