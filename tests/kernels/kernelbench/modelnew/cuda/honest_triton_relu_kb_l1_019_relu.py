# expect: passed
# label: none
# tries: a Triton kernel: compiled by Triton's JIT in the build sandbox (it runs ptxas), loaded
# from Triton's cache in the worker. The size is not specialised on (do_not_specialize), so one
# compiled kernel serves the hidden sizes too.
# Passed on an H200 (0.90x) once the build sandbox pinned platform.architecture() (Triton keys its C
# modules by it, and it asks the `file` program, which the worker may not run) and rewrote the
# absolute paths in Triton's cache groups to the build's final folder.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["n"])
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
