#!/usr/bin/env python3
"""How long torch's load_inline takes to build one ReLU kernel written in different ways, each in a
fresh python with an empty extension folder, on the machine it runs on (the GPU machine: see
docs/benchmarks.md, "Builds in seconds").

    python3 bench/load_inline_paths.py [--repeat 1] [--out paths.json]

- torch_in_cu: the published KernelBench style: the `.cu` includes torch/extension.h and returns a
  torch::Tensor; cpp_sources declares it (the .cu and the generated main.cpp both parse torch).
- binding_in_cpp: ksmith's prompt's form: a torch-free `.cu` (cuda_runtime.h, an extern "C"
  launcher), the torch::Tensor wrapper in cpp_sources, no_implicit_headers=True.
- pybind_only: the same `.cu`; cpp_sources is a pybind11 function over raw pointers (no torch
  header at all), no_implicit_headers=True, with_pytorch_error_handling=False.
Each row: wall seconds of the load_inline call, the largest child's peak resident memory, and
whether the result computes ReLU.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

KERNEL = r"""
__global__ void relu_kernel(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
"""

VARIANTS = {
    "torch_in_cu": dict(
        cuda="#include <torch/extension.h>\n" + KERNEL + r"""
torch::Tensor relu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  long long n = x.numel();
  relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
""",
        cpp="torch::Tensor relu(torch::Tensor x);",
        kwargs={},
        call="module.relu(x)"),
    "binding_in_cpp": dict(
        cuda="#include <cuda_runtime.h>\n" + KERNEL + r"""
extern "C" void relu_launch(const float* x, float* y, long long n, cudaStream_t stream) {
  relu_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
}
""",
        cpp=r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
extern "C" void relu_launch(const float* x, float* y, long long n, cudaStream_t stream);
torch::Tensor relu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  relu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), c10::cuda::getCurrentCUDAStream());
  return y;
}
""",
        kwargs={"no_implicit_headers": True},
        call="module.relu(x)"),
    "pybind_only": dict(
        cuda="#include <cuda_runtime.h>\n#include <cstdint>\n" + KERNEL + r"""
extern "C" void relu_launch(std::uintptr_t x, std::uintptr_t y, long long n, std::uintptr_t stream) {
  relu_kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>((const float*)x, (float*)y, n);
}
""",
        cpp=r"""
#include <pybind11/pybind11.h>
#include <cstdint>
extern "C" void relu_launch(std::uintptr_t x, std::uintptr_t y, long long n, std::uintptr_t stream);
void relu(std::uintptr_t x, std::uintptr_t y, long long n, std::uintptr_t stream) { relu_launch(x, y, n, stream); }
""",
        kwargs={"no_implicit_headers": True, "with_pytorch_error_handling": False},
        call="(lambda y: (module.relu(x.data_ptr(), y.data_ptr(), x.numel(), torch.cuda.current_stream().cuda_stream), y)[1])(torch.empty_like(x))"),
}

CHILD = r"""
import json, resource, sys, time
import torch
from torch.utils.cpp_extension import load_inline
spec = json.loads(sys.argv[1])
start = time.perf_counter()
module = load_inline(name=spec["name"], cpp_sources=spec["cpp"], cuda_sources=spec["cuda"], functions=["relu"],
                     extra_cuda_cflags=["-O3"], **spec["kwargs"])
seconds = time.perf_counter() - start
x = torch.randn(1 << 20, device="cuda")
y = eval(spec["call"])
torch.cuda.synchronize()
print(json.dumps({"seconds": seconds, "correct": bool(torch.equal(y, torch.relu(x))),
                  "largest_child_rss_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""


def run_variant(name, variant, index):
    with tempfile.TemporaryDirectory(prefix="load-inline-") as extensions:
        environment = dict(os.environ, TORCH_EXTENSIONS_DIR=extensions)
        spec = dict(variant, name=f"{name}_{index}_{os.getpid()}")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], env=environment,
                              capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            return {"variant": name, "error": done.stderr[-2000:], "process_s": wall}
        row = json.loads(done.stdout.strip().splitlines()[-1])
        row.update(variant=name, process_s=wall)
        return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = []
    for index in range(args.repeat):
        for name in args.variants.split(","):
            row = run_variant(name, VARIANTS[name], index)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "w") as out:
            json.dump(rows, out, indent=1)
    print("| variant | load_inline s | whole process s | largest child RSS | correct |")
    print("|---|---|---|---|---|")
    for row in rows:
        if "error" in row:
            print(f"| {row['variant']} | failed | {row['process_s']:.1f} | | {row['error'][-200:]!r} |")
            continue
        print(f"| {row['variant']} | {row['seconds']:.2f} | {row['process_s']:.2f} | "
              f"{row['largest_child_rss_bytes'] / 2**30:.2f} GiB | {row['correct']} |")


if __name__ == "__main__":
    main()
