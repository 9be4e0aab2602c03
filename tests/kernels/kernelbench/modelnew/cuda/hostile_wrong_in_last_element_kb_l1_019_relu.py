# expect: wrong_output
# tries: an answer wrong in one element only, the last of the output: a checker that compares a
# sample of rows (as a float64 oracle at KernelBench's full sizes might) passes it whenever the
# sample misses that row. ksmith compares every element at every size it judges, the problem's
# own included.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        flat = y.view(-1)
        flat[-1] = x.reshape(-1)[-1].abs() + 1.0
        return y
