# expect: wrong_output
# tries: computes once and returns that result on every later call (KernelBench's five fixed
# inputs would not notice a cache keyed on shape).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        self.cache = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self.cache:
            self.cache[key] = torch.relu(self.linear(x)) * self.scale
        return self.cache[key]
