# Two outputs from one forward: a row sum and a row maximum.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return x.sum(dim=1), x.amax(dim=1)


rows = 300
cols = 500


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
