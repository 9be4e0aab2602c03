# expect: passed
# generalizes: no
# reason: does not generalize
# worker: alive
# tries: a forward that raises ValueError at any size but the problem's: the verdict at the problem's
# sizes stands, the exception is the hidden shapes' failure (generalizes: no, naming it), and the
# worker, which was not aborted, closes cleanly.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        if tuple(x.shape) != (64, 256):
            raise ValueError(f"written for (64, 256) only, got {tuple(x.shape)}")
        return torch.relu(self.linear(x)) * self.scale
