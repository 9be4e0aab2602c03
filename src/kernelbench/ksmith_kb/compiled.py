# torch.compile as KernelBench's second baseline: the problem's Model under inductor, timed beside
# the candidate in its worker, where no compiler may run. Run twice: by the warm step (ksmith runs
# main() in the build sandbox, which may run compilers: it fills inductor's and Triton's caches at
# every size the worker will call) and embedded in the compiled baseline's shim (the worker: it
# loads those caches and compiles nothing). Both
# call the model through the same Runner code on buffers of the same shapes, dtypes and device,
# so that inductor's cache keys (the graph, its inputs' metadata, the config) match.
#
# Trusted code throughout: the problem's Model and ksmith's own; the candidate never writes the
# caches. In the worker, what this runner changes for the process (the environment inductor and
# Triton read their caches from) is set for its own first call at a size and put back after, so
# the candidate's ProcessState finds the environment as it left it.
import os

from .extensions import ProgramRecorder, pin_platform_architecture
from .runner import TORCH_DTYPES, Runner, load_problem


def configure_inductor(torch):
    """One compile thread (a worker pool would fork, which the worker may not), the FX graph
    cache on, no autotuning beyond what the warm step did, and no profile dynamo would write
    into the (read-only, in the worker) cache: the same in warm step and worker."""
    import torch._dynamo.config as dynamo_config
    import torch._inductor.config as config
    if hasattr(dynamo_config, "automatic_dynamic_local_pgo"):
        dynamo_config.automatic_dynamic_local_pgo = False
    config.compile_threads = 1
    config.fx_graph_cache = True
    if hasattr(config, "autotune_local_cache"):
        config.autotune_local_cache = True
    if hasattr(config, "autotune_remote_cache"):
        config.autotune_remote_cache = False
    if hasattr(config, "fx_graph_remote_cache"):
        config.fx_graph_remote_cache = False


class CacheEnvironment:
    """Points inductor and Triton at the compiled baseline's caches while a model compiles or
    loads, and puts the process's values back after. A user name and home too: inductor and
    Triton derive folders from them, and the worker, with no passwd to read, cannot look its
    user up (getpass and Path.home() raise there). And tempfile's folder: inductor names a
    folder after it on import, and the worker, which may write nowhere, has no usable one."""

    NAMES = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "HOME", "USER", "LOGNAME")

    def __init__(self, directory):
        self.values = {"TORCHINDUCTOR_CACHE_DIR": os.path.join(directory, "inductor"),
                       "TRITON_CACHE_DIR": os.path.join(directory, "triton"),
                       "HOME": directory, "USER": "ksmith", "LOGNAME": "ksmith"}
        self.directory = directory
        self.saved = {}
        self.saved_tempdir = None

    def __enter__(self):
        import tempfile
        self.saved = {name: os.environ.get(name) for name in self.NAMES}
        os.environ.update(self.values)
        self.saved_tempdir = tempfile.tempdir
        tempfile.tempdir = os.path.join(self.directory, "tmp")
        return self

    def __exit__(self, *exc):
        import tempfile
        tempfile.tempdir = self.saved_tempdir
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        return False


def answer_queries(subprocess, records):
    """The tools' version queries the warm step saw (`ptxas --version`, `ldconfig -p`), answered
    from its record; anything else goes to whatever answered before (a candidate's replay, or
    subprocess itself, which the worker's seccomp refuses)."""
    import base64
    answers = {tuple(record["argv"]): record for record in records if "output" in record}
    previous = subprocess.check_output

    def answering(*args, **kwargs):
        argv = args[0] if args else kwargs.get("args")
        key = (str(argv),) if isinstance(argv, (str, bytes)) else tuple(str(part) for part in argv or [])
        record = answers.get(key)
        if record is None or record.get("returncode", 0) != 0:
            return previous(*args, **kwargs)
        output = base64.b64decode(record.get("output", ""))
        if kwargs.get("text") or kwargs.get("universal_newlines") or kwargs.get("encoding"):
            output = output.decode(kwargs.get("encoding") or "utf-8", errors="replace")
        return output
    subprocess.check_output = answering


def _report_failure(error):
    """What a compiled baseline that cannot run says on the worker's stderr (its log, which the
    verdict's second_timing stage keeps), and the one line it is remembered by."""
    import sys
    import traceback
    traceback.print_exc(limit=-12)
    failure = f"{type(error).__name__}: {str(error)[:400]}"
    print(f"ksmith: the torch.compile baseline cannot run here: {failure}", file=sys.stderr)
    return failure


class CompiledRunner(Runner):
    """The baseline's Runner with `torch.compile(model)` (inductor, default mode) in its place.
    The weights are bound on the eager module, which the compiled one wraps: inductor reads them
    as graph inputs, so ksmith's buffers reach it as they reach eager."""

    def __init__(self, spec, role):
        super().__init__(spec, role.replace("compiled", "baseline"))
        compiled = spec.get("compiled") or {}
        if not hasattr(self.torch, "compile"):
            raise RuntimeError(f"torch {self.torch.__version__} has no torch.compile (torch 2.0 or later has)")
        self.directory = compiled.get("directory", "")
        self.environment = CacheEnvironment(self.directory)
        # Importing dynamo asks for inductor's cache folder, and with none set derives one from
        # the user's name (which the worker cannot look up) and sets it for the whole process.
        with self.environment:
            configure_inductor(self.torch)
        import subprocess
        answer_queries(subprocess, compiled.get("programs", []))
        pin_platform_architecture()
        self.compiled_sizes = set()
        self.failure = None

    def _model(self, constants, dims):
        key = tuple(sorted(constants.items()))
        entry = self.models.get(key)
        if entry is None:
            model = self._build(load_problem(self.code, constants))
            entry = (self.torch.compile(model), self._weights(model, dims))
            if len(self.models) > 16:
                self.models.clear()
            self.models[key] = entry
        return entry

    def __call__(self, input_addresses, output_addresses, dim_values, stream=0):
        size = tuple(dim_values)
        if self.failure is not None:
            return  # writes nothing: the worker finds its outputs unwritten and reports no speedup
        if size in self.compiled_sizes:
            return super().__call__(input_addresses, output_addresses, dim_values, stream)
        # The first call at a size traces the model and loads inductor's code and Triton's
        # kernels from the caches; later calls run what it loaded. What fails here (a cache that
        # misses, so inductor would compile) must not end the worker, whose candidate was judged
        # already: the baseline then writes nothing, which the worker reports, and says why.
        try:
            with self.environment:
                super().__call__(input_addresses, output_addresses, dim_values, stream)
        except Exception as error:
            self.failure = _report_failure(error)
            self.pending, self.checked = [], None
            return
        self.compiled_sizes.add(size)


class _Unavailable:
    """A compiled baseline that could not start: it writes nothing (the worker then reports no
    second speedup) and said why once."""

    def __init__(self, failure):
        self.failure = failure

    def __call__(self, input_addresses, output_addresses, dim_values, stream=0):
        return

    def finish(self, stream=0):
        return


def make_compiled_runner(spec, role):
    """The worker's factory (shim.make_runner). A compiled baseline that cannot even start (a torch without
    torch.compile, an import the worker's sandbox refuses) must not end the worker, whose
    candidate was judged already."""
    try:
        return CompiledRunner(spec, role)
    except Exception as error:
        return _Unavailable(_report_failure(error))


class _Buffers:
    """Device (or host) tensors shaped as ksmith's buffers at one size, for the warm step's calls."""

    def __init__(self, torch, spec, dims, cuda):
        device = "cuda" if cuda else "cpu"
        self.tensors = []
        self.inputs = []
        self.outputs = []
        for group, target in ((spec["inputs"], self.inputs), (spec["outputs"], self.outputs)):
            for tensor in group:
                shape = [dims[d] for d in tensor["shape"]]
                dtype = getattr(torch, TORCH_DTYPES[tensor["dtype"]])
                if "integers" in tensor:
                    # Its lowest value everywhere: in range at every size (an index, a label), and
                    # what inductor compiles does not depend on values.
                    value = torch.full(shape, int(tensor["integers"].get("low", 0)), dtype=torch.int32, device=device)
                elif dtype.is_floating_point:
                    value = torch.randn(shape, device=device).to(dtype)
                else:
                    value = torch.zeros(shape, dtype=dtype, device=device)
                self.tensors.append(value)
                target.append(value.data_ptr())


def warm(spec_path):
    """The warm step (ksmith runs `python3 -I warm.py spec.json` in the build sandbox, main() here):
    calls the compiled baseline once at each size, with caches in spec["directory"], and writes
    manifest.json (the tools' answers, the sizes warmed, what failed) for the worker's shim."""
    import json
    import subprocess
    import sys
    import traceback
    with open(spec_path) as spec_file:
        spec = json.load(spec_file)
    for entry in reversed(spec.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    programs = ProgramRecorder(subprocess)
    runner_spec = dict(spec["runner"])
    runner_spec["compiled"] = {"directory": spec["directory"], "programs": []}
    directory = spec["directory"]
    for name in ("inductor", "triton"):
        os.makedirs(os.path.join(directory, name), exist_ok=True)
    runner = CompiledRunner(runner_spec, spec["role"])
    torch = runner.torch
    warmed, failures = [], []
    for dims in spec["shapes"]:
        try:
            buffers = _Buffers(torch, runner_spec, dims, runner.cuda)
            values = [dims[d] for d in runner_spec["dims"]]
            stream = torch.cuda.current_stream().cuda_stream if runner.cuda else 0
            runner(buffers.inputs, buffers.outputs, values, stream)
            if runner.failure is not None:  # the runner caught it (as it must in the worker)
                failures.append(f"at {dims}: {runner.failure}")
                break
            runner.finish(stream)
            if runner.cuda:
                torch.cuda.synchronize()
            warmed.append(dims)
        except BaseException as error:  # reported: the worker then cannot time against it at this size
            traceback.print_exc()
            failures.append(f"at {dims}: {type(error).__name__}: {str(error)[:400]}")
    manifest = {"programs": programs.records, "warmed": warmed, "failures": failures,
                "torch": torch.__version__}
    with open(os.path.join(directory, "manifest.json"), "w") as out:
        json.dump(manifest, out)


def main(argv):
    warm(argv[0])
