# expect: passed
# generalizes: no
# reason: does not generalize
# tries: a candidate that kills its worker (a segfault) at any size but the problem's: the verdict at the
# problem's sizes stands, and the crash is reported as the hidden shapes' failure.
import ctypes

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        if tuple(x.shape) != (64, 256):
            ctypes.string_at(0)  # reads address 0: SIGSEGV
        return torch.relu(self.linear(x)) * self.scale
