# shim.py's entries as the generated C++ calls them: the warm entry the CUDA worker calls before its
# walls go up imports torch and makes no runner (the first call still makes the role's own).
import sys

import pytest
import torch

from ksmith_kb import shim


def test_warm_imports_torch_and_makes_no_runner():
    before = dict(shim.runners)
    assert shim.ksmith_warm("kb_l1_019_relu/baseline") is None
    assert "torch" in sys.modules
    assert shim.runners == before


def test_roles_are_read_from_the_key():
    assert shim.role_of("kb_l1_019_relu/cuda_baseline") == "cuda_baseline"
    assert shim.role_of("kb_l1_019_relu/candidate") == "candidate"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU here: the GPU machine runs it (scripts/gpu_kernelbench.sh)")
def test_warm_of_a_gpu_role_starts_torchs_cuda_state():
    shim.ksmith_warm("kb_l1_019_relu/cuda_baseline")
    assert torch.cuda.is_initialized()
