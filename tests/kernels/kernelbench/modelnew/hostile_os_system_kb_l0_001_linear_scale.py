# expect: integrity_violation
# static: side_effect
# reason: the candidate tried system/posix_spawn
# tries: runs a shell command from forward (a compiler, a benchmark of its own, anything). The
# sandbox refuses the process, and the attempt alone fails the candidate (it raises after, as a
# candidate that cannot run its program would).
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        if os.system("true") != 0:
            raise RuntimeError("os.system failed")
        return torch.relu(self.linear(x)) * self.scale
