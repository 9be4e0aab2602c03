# A boolean input: a mask, drawn the way KernelBench's masked_cumsum draws one.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.sum(x * mask, dim=self.dim)


batch_size = 48
length = 80
dim = 1


def get_inputs():
    x = torch.randn(batch_size, length)
    mask = torch.randint(0, 2, x.shape).bool()
    return [x, mask]


def get_init_inputs():
    return [dim]
