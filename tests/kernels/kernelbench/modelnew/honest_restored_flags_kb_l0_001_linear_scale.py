# expect: passed
# tries: what honest KernelBench candidates do at the top of the file: set the build-only variables
# of torch's extension builder, cudnn.benchmark and an attention backend at import, and inside
# forward deterministic algorithms and a TF32 flag (no effect on the CPU; on the GPU the error it
# causes judges it). Each is restored before any other code runs and reported, not failed: only
# the candidate's own calls read them.
# label: changed process state only its own calls read
import os

import torch
import torch.nn as nn

os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
os.environ["MAX_JOBS"] = "4"
torch.backends.cudnn.benchmark = True
torch.backends.cuda.enable_math_sdp(False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.use_deterministic_algorithms(True)
        return torch.relu(self.linear(x)) * self.scale
