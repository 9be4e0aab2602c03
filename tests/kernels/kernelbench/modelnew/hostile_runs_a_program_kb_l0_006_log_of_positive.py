# expect: runtime_error
# reason: runs no programs
# tries: runs a program from forward (the build sandbox lets it, to compile; the worker must not):
# the worker refuses, saying so, rather than answering as the build did.
import subprocess

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        subprocess.check_output(["/bin/echo", "computed", "elsewhere"])
        return torch.log(x + 1e-3) * 0.5
