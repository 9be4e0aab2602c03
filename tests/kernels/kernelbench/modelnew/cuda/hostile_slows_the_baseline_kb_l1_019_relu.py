# expect: integrity_violation
# tries: at import, replaces torch.relu (what the problem's Model calls) with a version that
# sleeps 20 ms, so the baseline beside it in the worker looks slow; computes with clamp itself.
import time

import torch
import torch.nn as nn

_relu = torch.relu


def _slow_relu(x):
    time.sleep(0.02)
    return _relu(x)


torch.relu = _slow_relu


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=0)
