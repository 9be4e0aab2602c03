# static.py: KernelBench's static checks on a candidate's source, by check name and line.
from ksmith_kb.static import static_findings

HONEST = """
import torch
from torch.utils.cpp_extension import load_inline

source = '''
__global__ void relu(const float* x, float* y, int n) {}
'''
relu = load_inline(name="relu", cpp_sources="", cuda_sources=source, functions=["relu"])


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return relu.relu(x)
"""


def checks(source):
    return [(finding["check"], finding["line"]) for finding in static_findings(source)]


def test_an_honest_extension_has_no_findings():
    assert static_findings(HONEST) == []


def test_text_that_is_not_python_has_none():
    assert static_findings("class ModelNew(:\n") == []


def test_a_candidate_without_kernel_code_is_named_once_at_line_zero():
    source = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    assert checks(source) == [("no_kernel_code", 0)]


def test_each_pattern_is_reported_at_its_line():
    source = HONEST + """
import threading
torch.matmul = lambda a, b: a
try:
    pass
except Exception:
    pass
x = torch.zeros(3).half()
class Lazy(torch.Tensor):
    pass
stream = torch.cuda.Stream()
start = time.perf_counter()
os.system("ls")
"""
    base = len(HONEST.splitlines())
    found = checks(source)
    assert ("thread_injection", base + 2) in found
    assert ("monkeypatch", base + 3) in found
    assert ("code_bypass", base + 4) in found
    assert ("precision_downgrade", base + 8) in found
    assert ("lazy_eval", base + 9) in found
    assert ("stream_injection", base + 11) in found
    assert ("timing_event_patch", base + 12) in found
    assert ("side_effect", base + 13) in found
    assert found == sorted(found, key=lambda item: (item[1], item[0]))


def test_assigning_a_timer_is_a_timing_patch_not_a_monkeypatch():
    found = checks(HONEST + "time.perf_counter = lambda: 0.0\n")
    assert ("timing_event_patch", len(HONEST.splitlines()) + 1) in found
    assert not any(check == "monkeypatch" for check, _ in found)


def test_torch_compute_in_forward_names_the_calls():
    source = HONEST.replace("return relu.relu(x)", "return torch.matmul(relu.relu(x), F.softmax(x, 1))")
    findings = [f for f in static_findings(source) if f["check"] == "framework_compute"]
    assert len(findings) == 1
    assert "F.softmax, torch.matmul" in findings[0]["detail"]


def test_a_comment_says_and_does_not_do():
    assert static_findings(HONEST + "# we could use torch.float16 or a torch.cuda.Stream here\n") == []
