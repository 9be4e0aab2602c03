# shim.py's entries as the generated C++ calls them: the warm entry the CUDA worker calls before its
# walls go up imports torch and makes no runner (the first call still makes the role's own).
import json
import os
import subprocess
import sys

import pytest
import torch

from ksmith_kb import shim


def test_warm_imports_torch_from_the_specs_search_path_and_makes_no_runner(tmp_path):
    before = dict(shim.runners)
    spec = json.dumps({"sys_path": [str(tmp_path)]})
    assert shim.ksmith_warm("kb_l1_019_relu/baseline", spec) is None
    assert str(tmp_path) in sys.path
    assert shim.runners == before
    sys.path.remove(str(tmp_path))


def test_warm_imports_torch_in_a_process_that_had_not():
    # A fresh python: this test module itself imported torch.
    package = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "kernelbench")
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from ksmith_kb import shim; "
              "before = 'torch' in sys.modules; shim.ksmith_warm('t/baseline', '{}'); "
              "print(before, 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-B", "-c", script, package], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_warm_raises_nothing_the_first_call_would_meet_again():
    assert shim.ksmith_warm("kb_l1_019_relu/baseline", "not json") is None


def test_roles_are_read_from_the_key():
    assert shim.role_of("kb_l1_019_relu/cuda_baseline") == "cuda_baseline"
    assert shim.role_of("kb_l1_019_relu/candidate") == "candidate"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU here: the GPU machine runs it (scripts/gpu_kernelbench.sh)")
def test_warm_of_a_gpu_role_starts_torchs_cuda_state():
    shim.ksmith_warm("kb_l1_019_relu/cuda_baseline", "{}")
    assert torch.cuda.is_initialized()
