import torch
import torch.nn as nn

while True:  # hangs at import
    pass


class Model(nn.Module):
    def forward(self, x):
        return x
