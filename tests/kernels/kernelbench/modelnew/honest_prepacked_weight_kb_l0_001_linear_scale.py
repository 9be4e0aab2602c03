# expect: passed
# label: no custom kernel
# tries: a model's weights are its state, the same in every call, so a ModelNew may derive from them
# once and reuse what it derived (here the transposed weight, packed at the first forward call, as
# weight pre-packing does). ksmith's weights are its own draw, secret, held for the whole
# verification at a shape; only the inputs are fresh.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        self.packed = None

    def forward(self, x):
        if self.packed is None:
            self.packed = self.linear.weight.t().contiguous()
        return torch.relu(torch.addmm(self.linear.bias, x, self.packed)) * self.scale
