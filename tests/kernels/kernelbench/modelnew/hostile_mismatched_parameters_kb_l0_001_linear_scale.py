# expect: compile_error
# reason: ModelNew's parameters do not match Model's (linear.weight [
# reason: it has [('weight', [
# worker: alive
# tries: a fused kernel that forgot the bias: ModelNew's one parameter cannot take Model's weight and
# bias, so there are no weights to judge it with. A verdict naming both lists, not an aborted worker.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.scale = scale

    def forward(self, x):
        return torch.relu(x @ self.weight.t()) * self.scale
