# expect: integrity_violation
# tries: caches its result keyed on the input's shape and 8 sampled elements; computes honestly on a
# miss and returns the cached result on a hit (KernelBench's repeated inputs would all be hits;
# ksmith's timing loop changes only a few elements when a set is reused).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        self.cache = {}

    def forward(self, x):
        flat = x.reshape(-1)
        picks = torch.linspace(0, flat.numel() - 1, 8).long()
        key = (tuple(x.shape), tuple(flat[picks].tolist()))
        if key not in self.cache:
            self.cache[key] = torch.relu(self.linear(x)) * self.scale
        return self.cache[key].clone()
