# expect: passed
# label: none
# tries: a Triton kernel: compiled by Triton's JIT in the build sandbox (it runs ptxas), loaded
# from Triton's cache in the worker. The size is not specialised on (do_not_specialize), so one
# compiled kernel serves the hidden sizes too.
# (it failed while the build compiled only at the public sizes: the worker met a size whose
# specialisation Triton had not compiled, and it cannot run ptxas.)
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
