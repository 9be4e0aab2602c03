# ksmith_kb/compiled.py's own logic on the CPU, where Debian's torch (1.13) has no torch.compile: it
# is stood in for by a wrapper that records the environment of each call (inductor itself runs only
# in the GPU test). Checks the warm step's manifest, that the cache environment is set for the
# first call at a size only and put back, that the compiled runner answers what the eager
# baseline's runner answers on the same buffers (weights included), and that a failure to load
# writes nothing and raises nothing.
# usage: python3 kb_compiled_probe.py SOURCE_DIR ANALYSIS_JSON WORK_DIR   (prints OK at the end)
import json
import tempfile
import os
import sys
import types

source_dir, analysis_path, work = sys.argv[1:4]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(source_dir, "src", "kernelbench"))
import torch
tempdir_before = tempfile.tempdir

seen = {"compiles": 0, "cache_dir": "unset"}


def standing_in_for_compile(model):
    seen["compiles"] += 1

    class Compiled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, *arguments):
            seen["cache_dir"] = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
            seen["tempdir"] = tempfile.tempdir
            return self.inner(*arguments)
    return Compiled()


torch.compile = standing_in_for_compile
inductor = types.ModuleType("torch._inductor")
inductor.config = types.ModuleType("torch._inductor.config")
sys.modules.setdefault("torch._inductor", inductor)
sys.modules.setdefault("torch._inductor.config", inductor.config)
dynamo = types.ModuleType("torch._dynamo")
dynamo.config = types.ModuleType("torch._dynamo.config")
dynamo.config.automatic_dynamic_local_pgo = True  # torch's default: dynamo would write a profile into the cache
sys.modules.setdefault("torch._dynamo", dynamo)
sys.modules.setdefault("torch._dynamo.config", dynamo.config)
from ksmith_kb.compiled import CompiledRunner, _Buffers, warm  # noqa: E402
from ksmith_kb.runner import Runner  # noqa: E402
from ksmith_kb.shim import make_runner  # noqa: E402

analysis = json.load(open(analysis_path))
runner_spec = {key: analysis[key] for key in ("source", "file", "dims", "constant_dims", "inputs", "outputs",
                                              "scalars", "reference_dtype")}
runner_spec["sys_path"] = analysis["python"]["sys_path"]
dims = analysis["shapes"]["dev"][0]
warm_directory = os.path.join(work, "warm")
os.makedirs(warm_directory, exist_ok=True)
spec = {"runner": runner_spec, "role": "compiled", "sys_path": [], "directory": warm_directory, "shapes": [dims]}
with open(os.path.join(work, "spec.json"), "w") as out:
    json.dump(spec, out)
warm(os.path.join(work, "spec.json"))
manifest = json.load(open(os.path.join(warm_directory, "manifest.json")))
assert manifest["warmed"] == [dims] and not manifest["failures"], manifest
assert inductor.config.compile_threads == 1 and dynamo.config.automatic_dynamic_local_pgo is False
assert seen["cache_dir"] == os.path.join(warm_directory, "inductor"), seen
assert seen["tempdir"] == os.path.join(warm_directory, "tmp"), seen
assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ, "the warm step left the cache environment set"
assert tempfile.tempdir == tempdir_before, "the warm step left tempfile's folder set"

# The worker's runner, with spec["compiled"] as RenderCompiledBaseline writes it, against eager's.
worker_spec = dict(runner_spec)
worker_spec["compiled"] = {"directory": warm_directory, "programs": manifest["programs"]}
compiled = CompiledRunner(worker_spec, "compiled")
eager = Runner(runner_spec, "baseline")
buffers = _Buffers(torch, runner_spec, dims, False)
values = [dims[d] for d in runner_spec["dims"]]
eager_out = _Buffers(torch, runner_spec, dims, False)
eager(buffers.inputs, eager_out.outputs, values)
eager.finish()
for call in range(2):
    seen["cache_dir"] = "unset"
    compiled(buffers.inputs, buffers.outputs, values)
    compiled.finish()
    expected_dir = os.path.join(warm_directory, "inductor") if call == 0 else None
    assert seen["cache_dir"] == expected_dir, (call, seen)
    assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ, "the runner left the cache environment set"
    assert tempfile.tempdir == tempdir_before, "the runner left tempfile's folder set"
outputs = len(runner_spec["outputs"])
for got, want in zip(buffers.tensors[-outputs:], eager_out.tensors[-outputs:]):
    assert torch.equal(got, want), (got, want)
assert seen["compiles"] == 2, seen  # one model in the warm step, one in the worker's runner


def cannot_load(model):
    raise RuntimeError("a cache miss: inductor would compile")


torch.compile = cannot_load
failing = CompiledRunner(worker_spec, "compiled")
untouched = _Buffers(torch, runner_spec, dims, False)
for tensor in untouched.tensors[-outputs:]:
    tensor.fill_(float("nan"))
failing(buffers.inputs, untouched.outputs, values)
failing.finish()
assert failing.failure and "cache miss" in failing.failure, failing.failure
assert all(bool(torch.isnan(t).all()) for t in untouched.tensors[-outputs:]), "a failed load wrote outputs"

# One that cannot even start (here: a torch without torch.compile) is made, writes nothing and
# raises nothing: the worker's candidate was judged already.
del torch.compile
unavailable = make_runner(worker_spec, "compiled")
unavailable(buffers.inputs, untouched.outputs, values)
unavailable.finish()
assert "no torch.compile" in unavailable.failure, unavailable.failure
assert all(bool(torch.isnan(t).all()) for t in untouched.tensors[-outputs:]), "an unavailable baseline wrote outputs"
torch.compile = cannot_load

# A warm step whose compile fails (the runner catches it, as it must in the worker) warms nothing
# and says why, so that ksmith does not cache it.
failed_directory = os.path.join(work, "failed")
os.makedirs(failed_directory)
with open(os.path.join(work, "spec_failed.json"), "w") as out:
    json.dump(dict(spec, directory=failed_directory), out)
warm(os.path.join(work, "spec_failed.json"))
manifest = json.load(open(os.path.join(failed_directory, "manifest.json")))
assert manifest["warmed"] == [] and "cache miss" in manifest["failures"][0], manifest
print("OK")
