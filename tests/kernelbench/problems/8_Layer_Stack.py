# Sizes in a list (level 3's MLPs), and a layer count: changing it changes which parameters exist,
# so it must stay fixed while the widths vary.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, depth):
        super(Model, self).__init__()
        layers = []
        width = input_size
        for size in layer_sizes:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.Tanh()]
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


batch_size = 8
input_size = 48
layer_sizes = [40, 24]
depth = 2


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, depth]
