# expect: passed
# generalizes: no
# reason: does not generalize
# tries: a forward that raises ValueError on one-row inputs, which only the hidden shapes have: the
# verdict at the bench shape stands, the exception is the hidden shapes' failure, and the worker
# serves on (it was not aborted).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if x.shape[0] == 1:
            raise ValueError(f"needs more than one row, got {tuple(x.shape)}")
        return torch.relu(x)
