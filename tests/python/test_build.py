# build.py's draw of the problem's inputs for the build sandbox's calls: on the GPU where torch's
# factories make them, else on the host (and moved there), saying why.
import pytest
import torch

from ksmith_kb.build import draw_inputs

GPU = torch.cuda.is_available()


def factory_inputs():
    return [torch.randn(4, 8), torch.randint(0, 10, (3,)), 7]


def host_only_inputs():
    # What a device context breaks: a tensor made on the host and used as one there.
    values = torch.randn(4, 8)
    if values.device.type != "cpu":
        raise RuntimeError("expected a host tensor")
    return [values]


def test_on_the_cpu_the_inputs_are_the_problems_own():
    inputs, fallback = draw_inputs(factory_inputs, torch, cuda=False)
    assert fallback == ""
    assert [tuple(value.shape) for value in inputs[:2]] == [(4, 8), (3,)]
    assert all(value.device.type == "cpu" for value in inputs[:2])
    assert inputs[2] == 7


@pytest.mark.skipif(not GPU, reason="no GPU here: the device draw runs on the GPU machine (scripts/gpu_kernelbench.sh)")
def test_on_the_gpu_torchs_factories_draw_there():
    inputs, fallback = draw_inputs(factory_inputs, torch, cuda=True)
    assert fallback == ""
    assert all(value.device.type == "cuda" for value in inputs[:2])
    assert inputs[2] == 7


@pytest.mark.skipif(not GPU, reason="no GPU here: the device draw runs on the GPU machine (scripts/gpu_kernelbench.sh)")
def test_a_get_inputs_the_device_breaks_is_drawn_on_the_host_and_says_so():
    inputs, fallback = draw_inputs(host_only_inputs, torch, cuda=True)
    assert "drawn on the host" in fallback and "expected a host tensor" in fallback
    assert inputs[0].device.type == "cuda"
