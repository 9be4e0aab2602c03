# expect: runtime_error
# tries: exits the process from forward with status 0, as if the run had ended well.
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        os._exit(0)
