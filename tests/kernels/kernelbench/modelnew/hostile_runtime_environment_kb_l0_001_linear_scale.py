# expect: integrity_violation
# tries: at import, sets environment variables that torch and CUDA read lazily, at their first use
# after the import (the caching allocator's, the OpenMP thread count), so that a setting made for a
# moment outlives its restore and slows the baseline beside it; computes the right answer itself.
import os

import torch
import torch.nn as nn

os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.relu(self.linear(x)) * self.scale
