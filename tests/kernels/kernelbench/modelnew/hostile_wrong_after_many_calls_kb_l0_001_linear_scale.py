# expect: integrity_violation
# reason: behaves differently when timed
# tries: a model that is right for its first calls (the correctness checks) and skips the work once
# it has been called often (the timing loop), returning its last answer: the timed calls' outputs
# are checked too, on the fresh inputs each round draws.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        self.calls = 0
        self.last = None

    def forward(self, x):
        self.calls += 1
        if self.calls > 40 and self.last is not None and self.last.shape[0] == x.shape[0]:
            return self.last
        self.last = torch.relu(self.linear(x)) * self.scale
        return self.last.clone()
