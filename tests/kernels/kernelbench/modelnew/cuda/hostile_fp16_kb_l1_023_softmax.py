# expect: wrong_output
# tries: lowers the precision: softmax computed in float16 and widened back.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x.half(), dim=1).float()
