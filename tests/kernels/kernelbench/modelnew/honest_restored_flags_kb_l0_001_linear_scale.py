# expect: passed
# tries: what honest KernelBench candidates do at the top of the file: set the build-only variables
# of torch's extension builder and cudnn.benchmark at import, and a TF32 flag inside forward
# (no effect on the CPU; on the GPU its measured error is what judges it). Each is restored before
# any other code runs and reported, not failed: only the candidate's own calls read them.
# label: changed process state only its own calls read
import os

import torch
import torch.nn as nn

os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
os.environ["MAX_JOBS"] = "4"
torch.backends.cudnn.benchmark = True


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        torch.backends.cuda.matmul.allow_tf32 = True
        return torch.relu(self.linear(x)) * self.scale
