# Static findings on a KernelBench-format candidate's source, in the build sandbox: what
# KernelBench's kernel_static_checker looks for, under its check names, reported beside the
# verdict (build stage, build_sandbox.static_findings) and never deciding it: ksmith judges what a
# candidate does when it runs, and a pattern in the text is a hint for the reader, not a proof (an
# honest kernel may use a stream or fp16 where the task allows, a hostile one may hide it).
import ast
import re

TORCH_MODULES = {"torch", "time", "F", "nn", "functional", "cuda"}  # first names of what a candidate imports
TIMERS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", "Event", "elapsed_time",
          "synchronize", "process_time"}
TORCH_COMPUTE = {"matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "conv1d", "conv2d", "conv3d",
                 "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "linear", "softmax", "log_softmax",
                 "layer_norm", "batch_norm", "group_norm", "instance_norm", "scaled_dot_product_attention",
                 "relu", "gelu", "sigmoid", "tanh", "max_pool2d", "avg_pool2d", "sum", "mean", "cumsum"}
LOW_PRECISION = re.compile(r"\b(float16|bfloat16|__half|__nv_bfloat16|autocast|fp8|float8_e\w+)\b|\.half\s*\(")
STREAMS = re.compile(r"\b(torch\.cuda\.Stream|cudaStreamCreate\w*|torch\.cuda\.stream\s*\(|cudaStreamPerThread|"
                     r"get_stream_from_pool)")
SIDE_EFFECTS = {"os.system", "os.popen", "os._exit", "os.fork", "os.kill", "os.remove", "os.unlink", "open",
                "shutil.rmtree", "sys.exit", "exit"}
KERNEL_CODE = re.compile(r"\b(load_inline|cpp_extension\.load|triton\.jit|@jit|__global__|tl\.)")


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _line(source_lines, number):
    return source_lines[number - 1].strip()[:160] if 0 < number <= len(source_lines) else ""


def static_findings(source):
    """[{check, line, detail}] for `source`; an empty list for text that is not Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    findings = []

    def add(check, line, detail):
        findings.append({"check": check, "line": line, "detail": detail})

    forwards = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "forward"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and node.handlers:
            add("code_bypass", node.lineno, "try/except: a kernel that fails can fall back to PyTorch unseen")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = _dotted(target)
                if isinstance(target, ast.Attribute) and name.split(".")[0] in TORCH_MODULES:
                    check = "timing_event_patch" if target.attr in TIMERS else "monkeypatch"
                    add(check, node.lineno, f"assigns {name}: changes a library function for everyone in the process")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [alias.name for alias in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            if any(name.split(".")[0] in ("threading", "concurrent", "multiprocessing", "asyncio") for name in names):
                add("thread_injection", node.lineno, f"imports {', '.join(names)}: work can finish after the call returns")
        elif isinstance(node, ast.ClassDef):
            bases = [_dotted(base) for base in node.bases]
            if any(base in ("torch.Tensor", "Tensor") for base in bases):
                add("lazy_eval", node.lineno, f"class {node.name} subclasses torch.Tensor: work can be deferred past the timer")
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name.split(".")[-1] in TIMERS and name.split(".")[0] in ("time", "torch"):
                add("timing_event_patch", node.lineno, f"calls {name}: a candidate has no need of the clock")
            elif name in SIDE_EFFECTS or name.startswith("subprocess."):
                add("side_effect", node.lineno, f"calls {name}: a kernel has no business with files or programs")
    for forward in forwards:
        called = {_dotted(node.func) for node in ast.walk(forward) if isinstance(node, ast.Call)}
        used = sorted(name for name in called if name.split(".")[-1] in TORCH_COMPUTE
                      and name.split(".")[0] in ("torch", "F", "nn", "functional"))
        if used:
            add("framework_compute", forward.lineno, f"forward calls {', '.join(used)}: PyTorch computes (part of) the result")
    for number, text in enumerate(lines, 1):
        if text.lstrip().startswith(("#", "//")):  # a comment says, it does not do
            continue
        if LOW_PRECISION.search(text):
            add("precision_downgrade", number, _line(lines, number))
        if STREAMS.search(text):
            add("stream_injection", number, _line(lines, number))
    if not KERNEL_CODE.search(source):
        add("no_kernel_code", 0, "no load_inline, load, Triton @jit or __global__ in the source: no kernel of its own")
    findings.sort(key=lambda finding: (finding["line"], finding["check"]))
    return findings
