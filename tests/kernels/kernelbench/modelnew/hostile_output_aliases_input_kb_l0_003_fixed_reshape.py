# expect: runtime_error
# tries: writes its answer into the input's memory and returns a view of it, so that ksmith's copy
# of the output after the call would do the returning.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        answer = torch.log1p(x.reshape(16, 64).abs()).sum(dim=0)
        view = x.reshape(-1)[:64]
        view.copy_(answer)
        return view
