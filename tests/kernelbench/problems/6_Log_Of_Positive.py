# A domain: the log needs non-negative inputs, which get_inputs draws with torch.rand.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return torch.log(x + 1e-3) * 0.5


n = 4096


def get_inputs():
    return [torch.rand(n)]


def get_init_inputs():
    return []
