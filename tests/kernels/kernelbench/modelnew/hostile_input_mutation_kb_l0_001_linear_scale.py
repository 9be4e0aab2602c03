# expect: integrity_violation
# tries: works in place on its input (relu_ on x before the layer), changing what the caller gave.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        out = torch.relu(self.linear(x)) * self.scale
        x.mul_(0.5)
        return out
