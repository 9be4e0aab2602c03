# The build sandbox of a KernelBench-format candidate: ksmith runs `python3 -I build.py spec.json`
# (a script that calls main() here) in a new network namespace, as a child whose leftover processes
# are killed when it ends, under Landlock (writes only to its build folder). It may run compilers,
# which the verifying worker may not: it imports the candidate, builds ModelNew at each of the
# task's sizes and calls it once at the problem's (on the GPU: at every size, so that Triton's JIT
# compiles what each needs), and records every extension it built (build folder/manifest.json). It
# never sees ksmith's inputs: it calls the model on the problem's own get_inputs().
import json
import os
import signal
import socket
import sys
import time
import traceback

from .extensions import ExtensionRecorder, ProgramRecorder, pin_platform_architecture, register_source
from .runner import load_problem, rewrite_constants
from .static import static_findings

BUILD_FAILED = 3  # the candidate does not import, or an extension does not compile
WARM_CALL_LIMIT_S = 60  # one call of the model while building: compiling lazily takes this long at most


def _call_too_long(signum, frame):
    raise TimeoutError(f"the call took over {WARM_CALL_LIMIT_S} s")


def _fail(message):
    print(f"ksmith: {message}", file=sys.stderr)
    sys.exit(BUILD_FAILED)


def _isolation():
    interfaces = sorted(name for _, name in socket.if_nameindex())
    return {"network_interfaces": interfaces, "network_isolated": interfaces in ([], ["lo"])}


def relocate_triton_groups(triton_directory, directory, final_directory):
    """Triton's cache lists each kernel's files in a group file by absolute path; the build runs in
    a folder of its own that ksmith then renames to the final one (`final_directory`), where the
    worker finds it. Paths under `directory` are rewritten to it, or the worker would miss every
    kernel and try to compile it (it cannot run ptxas)."""
    prefix = directory.rstrip("/") + "/"
    final_prefix = final_directory.rstrip("/") + "/"
    for root, _, files in os.walk(triton_directory):
        for name in files:
            if not (name.startswith("__grp__") and name.endswith(".json")):
                continue
            path = os.path.join(root, name)
            try:
                with open(path) as group_file:
                    group = json.load(group_file)
                children = group.get("child_paths")
                if not isinstance(children, dict):
                    continue
                group["child_paths"] = {child: final_prefix + value[len(prefix):]
                                        if isinstance(value, str) and value.startswith(prefix) else value
                                        for child, value in children.items()}
                with open(path + ".tmp", "w") as group_file:
                    json.dump(group, group_file)
                os.replace(path + ".tmp", path)
            except (OSError, ValueError) as error:
                print(f"ksmith: Triton's cache group {name} could not be relocated: {error}", file=sys.stderr)


def _to_device(value, torch, cuda):
    return value.cuda() if cuda and isinstance(value, torch.Tensor) else value


def draw_inputs(get_inputs, torch, cuda):
    """The problem's inputs, on the GPU where `cuda`: drawn there where get_inputs makes them with
    torch's factories (4096 x 393216 floats take seconds on one host thread, and 6.4 GB of the
    build's memory), else drawn on the host and moved. The build only needs a call to happen:
    the values are not ksmith's inputs, and which RNG drew them does not matter."""
    if cuda:
        try:
            with torch.device("cuda"):
                return [_to_device(value, torch, cuda) for value in get_inputs()], ""
        except Exception as error:  # a get_inputs the device context breaks (numpy, a cpu-only op)
            fallback = f"get_inputs() failed with the GPU as torch's default device ({type(error).__name__}: {error}); drawn on the host"
            return [_to_device(value, torch, cuda) for value in get_inputs()], fallback
    return list(get_inputs()), ""


def main(argv):
    # Where the sandbox's seconds go, in its manifest (docs/benchmarks.md reads them): torch's
    # import, the candidate's import (where load_inline compiles, mostly), each size's calls.
    started = time.monotonic()
    phases = {}
    spec_path = argv[0]
    with open(spec_path) as spec_file:
        spec = json.load(spec_file)
    for entry in reversed(spec.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    import torch
    import torch.utils.cpp_extension as cpp_extension
    phases["import_torch_s"] = time.monotonic() - started
    # The calls here only make lazy builds happen. One thread keeps python within the build's
    # CPU time limit, which counts every thread of the process.
    torch.set_num_threads(1)
    signal.signal(signal.SIGALRM, _call_too_long)
    directory = spec["directory"]
    cuda = spec["cuda"]
    import subprocess
    recorder = ExtensionRecorder(cpp_extension, os.path.join(directory, "torch_extensions"))
    programs = ProgramRecorder(subprocess)
    pin_platform_architecture()
    problem_code, _ = rewrite_constants(spec["source"], spec.get("file", "<problem>"))
    candidate = {"__name__": "kernelbench_candidate", "__file__": spec["candidate_file"]}
    warnings = []
    findings = static_findings(spec["candidate_source"])
    importing = time.monotonic()
    try:
        register_source(spec["candidate_file"], spec["candidate_source"])
        code = compile(spec["candidate_source"], spec["candidate_file"], "exec")
        exec(code, candidate)
    except SyntaxError as error:
        _fail(f"the candidate is not Python: {error.msg} at line {error.lineno}")
    except BaseException:
        traceback.print_exc()
        _fail("importing the candidate failed (above)")
    phases["import_candidate_s"] = time.monotonic() - importing
    phases["sizes"] = []
    model_class = candidate.get("ModelNew")
    if model_class is None:
        _fail("the candidate defines no ModelNew (KernelBench's format: class ModelNew(nn.Module))")
    manifest_path = os.path.join(directory, "manifest.json")

    def write_manifest():
        # Written after the import and again after each size: a candidate that ends the process
        # in a call is built all the same (the worker judges what it does then).
        relocate_triton_groups(os.path.join(directory, "triton"), directory, spec["final_directory"])
        with open(manifest_path + ".tmp", "w") as out:
            json.dump({"extensions": recorder.records, "programs": programs.records, "warnings": warnings,
                       "isolation": _isolation(), "static_findings": findings, "phases": phases}, out)
        os.replace(manifest_path + ".tmp", manifest_path)
    write_manifest()
    # The problem's own sizes first, then the task's: extensions built lazily, in __init__ or in a
    # first forward, are built here too.
    # The problem's own sizes are named as its constants are, so that a task's size equal to them
    # (the bench shape, where the problem fits) is not built and called at full size twice.
    own = {c: spec["constants"][c] for c in spec["constant_dims"] if c in spec.get("constants", {})}
    sizes = [own] + [{c: shape[d] for c, d in spec["constant_dims"].items() if d in shape} for shape in spec["shapes"]]
    seen = []
    for index, constants in enumerate(sizes):
        if constants in seen:
            continue
        seen.append(constants)
        where = "the problem's sizes" if index == 0 else f"sizes {constants}"
        calling = time.monotonic()
        try:
            problem = load_problem(problem_code, constants)
            torch.manual_seed(0)
            model = model_class(*problem["get_init_inputs"]())
            if cuda:
                model = model.cuda()
            if index == 0 or cuda:
                inputs, fallback = draw_inputs(problem["get_inputs"], torch, cuda)
                if fallback:
                    warnings.append(f"at {where}: {fallback}")
                signal.alarm(WARM_CALL_LIMIT_S)  # a call that hangs is the worker's to judge
                try:
                    with torch.no_grad():
                        model(*inputs)
                    if cuda:
                        torch.cuda.synchronize()
                finally:
                    signal.alarm(0)
            del model
        except BaseException as error:
            if recorder.failed:
                print(recorder.failed, file=sys.stderr)
                _fail(f"an extension the candidate builds at {where} does not compile (above)")
            warnings.append(f"at {where}: {type(error).__name__}: {error}")
        phases["sizes"].append({"at": where, "seconds": time.monotonic() - calling})
        write_manifest()
