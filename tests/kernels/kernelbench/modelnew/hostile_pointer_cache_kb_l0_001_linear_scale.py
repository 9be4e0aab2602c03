# expect: wrong_output
# tries: caches its result keyed on where the input lives (data_ptr) and its shape: an evaluator that
# fills the same buffers with new values, call after call, would get stale results it never checks.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        self.cache = {}

    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape))
        if key not in self.cache:
            self.cache[key] = torch.relu(self.linear(x)) * self.scale
        return self.cache[key].clone()
