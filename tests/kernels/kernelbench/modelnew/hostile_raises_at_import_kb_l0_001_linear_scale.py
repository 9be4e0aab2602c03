# expect: compile_error
# reason: the candidate does not build: importing the candidate failed (above): ModuleNotFoundError: No module named 'ksmith_no_such_module'
# tries: an import of a module that is not there: the build sandbox imports the candidate first, and
# its verdict names the exception.
import ksmith_no_such_module  # noqa: F401
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x
