# expect: wrong_output
# tries: precision lowered where no regex looks: the matmul runs in bfloat16 (8 bits of mantissa)
# and the result is widened back to float32, so every dtype the caller sees is right. The error is
# measured against the float64 oracle, and it is far outside float32's tolerance.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        low = F.linear(x.bfloat16(), self.linear.weight.bfloat16(), self.linear.bias.bfloat16())
        return torch.relu(low).float() * self.scale
