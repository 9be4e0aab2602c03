# expect: integrity_violation
# tries: launches its work on a private stream and returns without the caller's stream waiting
# for it, so a timer on the caller's stream sees almost nothing. CUPTI sees its kernel on
# another stream.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()

    def forward(self, x):
        with torch.cuda.stream(self.side):
            y = torch.relu(x)
        return y
