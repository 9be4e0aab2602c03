# A random reference: dropout is live in training mode, so no fixed answer exists. Must be refused.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, p):
        super(Model, self).__init__()
        self.dropout = nn.Dropout(p)

    def forward(self, x):
        return torch.softmax(self.dropout(x), dim=1)


batch_size = 16
features = 128
p = 0.5


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [p]
