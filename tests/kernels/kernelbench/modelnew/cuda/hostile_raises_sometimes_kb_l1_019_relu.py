# expect: runtime_error
# reason: ModelNew's forward raised ValueError: gave up on call 3
# tries: a forward that raises on some calls only (the build's calls pass): the exception is the
# verdict, naming its type and message, as a runtime_error; the worker is not aborted for it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls % 4 == 3:
            raise ValueError(f"gave up on call {self.calls}")
        return torch.relu(x)
