# expect: passed
# generalizes: no
# tries: a kernel written for the problem's own sizes alone, as KernelBench's problems are fixed-shape:
# it passes there, and the hidden shapes report that it does not generalize (view fails at any other batch).
import torch
import torch.nn as nn

BATCH, IN_FEATURES = 64, 256  # the problem's batch_size and in_features


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        rows = x.view(BATCH, IN_FEATURES)
        return torch.relu(torch.addmm(self.linear.bias, rows, self.linear.weight.t())) * self.scale
