# expect: runtime_error
# tries: writes its results to a file outside the worker's scratch folder (a cache for later runs).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        out = torch.relu(self.linear(x)) * self.scale
        with open("/tmp/ksmith_modelnew_cache.pt", "wb") as cache:
            torch.save(out, cache)
        return out
