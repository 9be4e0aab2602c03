#!/usr/bin/env python3
"""KernelBench problems on the GPU, at their own sizes: how far torch's float32 output is from the
float64 oracle ksmith would use, and torch eager against torch.compile (KernelBench reports both).

    python3 bench/kernelbench_gpu.py --problems 1:1,1:23,2:12 --out r.json

--kernelbench is a KernelBench checkout's problem folder (with level1/, level2/); by default the
few problems the repository ships (tests/data/kernelbench), else ../shared/kernelbench has them all.

Each problem is built as KernelBench builds it (seed 0, training mode, get_inputs() moved to the
GPU). Agreement: ||y32 - y64|| / ||y64|| and the largest |y32 - y64| / (|y64| + rms(y64)), with
TF32 off (torch's float32) and, for the record, cuDNN's default (TF32 on for convolutions). Timing:
CUDA events around one forward call, 5 warm-up calls, then the median of 30, under no_grad, with
no cache flush (as KernelBench times); torch.compile's first call (the compile) is timed apart.
Prints a Markdown table; the JSON holds everything.
"""
import argparse
import glob
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "kernelbench"))
from ksmith_kb.runner import as_tuple, load_problem, rewrite_constants  # noqa: E402


def find(kernelbench, level, problem):
    matches = glob.glob(os.path.join(kernelbench, f"level{level}", f"{problem}_*.py"))
    if not matches:
        raise SystemExit(f"no level {level} problem {problem} under {kernelbench}")
    return matches[0]


def build(torch, path, dtype):
    code, _ = rewrite_constants(open(path).read(), path)
    namespace = load_problem(code, {})
    torch.manual_seed(0)
    model = namespace["Model"](*namespace["get_init_inputs"]()).cuda()
    torch.manual_seed(1)
    inputs = [t.cuda() if isinstance(t, torch.Tensor) else t for t in as_tuple(namespace["get_inputs"]())]
    if dtype is not None:
        model = model.to(dtype)
        inputs = [t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]
    return model, inputs


def time_ms(torch, call, repeats=30, warmup=5):
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def errors(torch, fast, exact):
    worst_norm = worst_elem = 0.0
    for f, e in zip(fast, exact):
        if not f.is_floating_point():
            worst_norm = max(worst_norm, 0.0 if torch.equal(f.long(), e.long()) else float("inf"))
            continue
        f, e = f.double(), e.double()
        difference = (f - e).abs()
        scale = float(e.norm())
        rms = scale / max(1, e.numel()) ** 0.5
        worst_norm = max(worst_norm, float(difference.norm()) / scale if scale > 0 else float(difference.max()))
        worst_elem = max(worst_elem, float((difference / (e.abs() + rms + 1e-300)).max()))
    return worst_norm, worst_elem


def measure(torch, path):
    """Agreement first (the outputs go to host memory, so that a 6.4 GB problem's float32 and
    float64 copies need not share the GPU), then the timings."""
    result = {"file": os.path.basename(path)}
    with torch.no_grad():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        model, inputs = build(torch, path, None)
        fp32 = [t.float().cpu() for t in as_tuple(model(*inputs))]
        torch.backends.cudnn.allow_tf32 = True  # torch's default for convolutions
        fp32_tf32 = [t.float().cpu() for t in as_tuple(model(*inputs))]
        torch.backends.cudnn.allow_tf32 = False
        reference_model, _ = build(torch, path, torch.float64)
        reference_inputs = [t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]
        reference = [t.cpu() for t in as_tuple(reference_model(*reference_inputs))]
        del reference_model, reference_inputs
        torch.cuda.empty_cache()
        result["norm_error"], result["elem_error"] = errors(torch, fp32, reference)
        result["norm_error_cudnn_tf32"], _ = errors(torch, fp32_tf32, reference)
        del fp32, fp32_tf32, reference
        result["eager_ms"] = time_ms(torch, lambda: model(*inputs))
        compiled = torch.compile(model)
        started = time.perf_counter()
        compiled(*inputs)
        torch.cuda.synchronize()
        result["compile_s"] = time.perf_counter() - started
        result["compiled_ms"] = time_ms(torch, lambda: compiled(*inputs))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernelbench", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                                              "data", "kernelbench"))
    parser.add_argument("--problems", required=True, help="level:problem pairs, comma-separated")
    parser.add_argument("--out", required=True)
    arguments = parser.parse_args()
    import torch
    results = []
    for item in arguments.problems.split(","):
        level, problem = item.split(":")
        path = find(arguments.kernelbench, level, problem)
        try:
            result = measure(torch, path)
        except Exception as error:
            result = {"file": os.path.basename(path), "error": traceback.format_exception_only(type(error), error)[-1].strip()}
        result["level"] = int(level)
        results.append(result)
        torch.cuda.empty_cache()
        torch._dynamo.reset()
        print(json.dumps(result), flush=True)
        # After every problem: a run cut short still leaves what it measured.
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "results": results},
                  open(arguments.out, "w"), indent=2)
    print("\n| level | problem | fp32 vs fp64 norm | elem | with cuDNN TF32 | eager ms | compiled ms | compile s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['level']} | {r['file']} | {r['error'][:80]} | | | | | |")
            continue
        print(f"| {r['level']} | {r['file'][:40]} | {r['norm_error']:.1e} | {r['elem_error']:.1e} | "
              f"{r['norm_error_cudnn_tf32']:.1e} | {r['eager_ms']:.3f} | {r['compiled_ms']:.3f} | {r['compile_s']:.1f} |")


if __name__ == "__main__":
    main()
