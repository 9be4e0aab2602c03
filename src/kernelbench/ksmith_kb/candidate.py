# A KernelBench-format candidate (a file defining ModelNew) run by ksmith: embedded, with runner.py
# and extensions.py, in the candidate's shim, which the worker loads inside its sandbox (no fork,
# no exec, no network, reads only where the task allows). The candidate's Python is untrusted; this
# file is not.
#
# What it guards, beside what the worker already checks (inputs unchanged, outputs written only
# by the call, fresh inputs every timed round):
# - ModelNew gets the task's weights: each parameter of the problem's Model is bound, by name or
#   else by order and shape, to one of ModelNew's, and every call reads ksmith's buffers.
# - Its outputs must be plain tensors of their own: a subclass could defer its work into the copy
#   that follows the timed call, and an alias of an input would make that copy the work.
# - Process-wide state (torch's threads and flags, the default dtype, RNG, environment, tracing
#   hooks, the functions of torch and time) is restored after its import and after each call,
#   before the baseline beside it runs; what it changed is reported on stderr. Changes that can
#   reach other code (replaced functions, threads, hooks, the environment torch reads) fail it;
#   flags that only its own calls read while they are set are restored and reported only.
# - A Python thread it leaves running after a call fails it: work must end with the call.
# - What its code raises (at import, in ModelNew's constructor, in forward) is raised nothing
#   across the shim: the shim's entries return a report instead, the worker passes it on, and the
#   worker lives on. An abort is left for what really crashes.
import os
import sys
import time
import types

from .extensions import ExtensionLoader, ProgramReplay, pin_platform_architecture, register_source
from .runner import Runner
from .shim import runners


# Read only by torch's extension builder (cpp_extension), which the worker never runs: the build
# sandbox built the candidate's extensions. Setting them at import is what honest load_inline
# candidates do.
BUILD_ONLY_VARIABLES = frozenset({
    "TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "TORCH_EXTENSIONS_DIR", "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS",
    "NVCC_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "TORCH_NVCC_FLAGS", "CUDA_HOME", "CUDA_PATH",
    "TORCH_DONT_CHECK_COMPILER_ABI", "USE_NINJA"})


class CandidateError(Exception):
    """What the candidate did wrong, said plainly: the shim prints it and the verdict carries it."""


class ProcessState:
    """Everything a candidate could change for the whole process, captured before its code runs.
    The getters and setters are bound now, so that a candidate that replaces them changes nothing
    here."""

    def __init__(self, torch):
        import gc
        import threading
        self.torch = torch
        spaces = [("torch", torch), ("torch.nn.functional", torch.nn.functional), ("torch.Tensor", torch.Tensor),
                  ("torch._C._VariableFunctions", torch._C._VariableFunctions), ("torch._C._nn", torch._C._nn),
                  ("torch.nn.init", torch.nn.init), ("time", time), ("torch.backends.cudnn", torch.backends.cudnn)]
        # Every module class torch.nn offers (Linear.forward, Conv2d._conv_forward...): what a
        # problem's Model is built from.
        spaces += [(f"torch.nn.{name}", value) for name, value in vars(torch.nn).items()
                   if isinstance(value, type) and issubclass(value, torch.nn.Module)]
        self.spaces = [(name, space, dict(vars(space))) for name, space in spaces if hasattr(space, "__dict__")]
        backends = torch.backends
        # (name, get, put, fails): `fails` where the setting reaches code beside the candidate's
        # calls (its threads against the baseline's, a hook or collector over every call); the
        # others are read by its own calls alone, while they are set (precision is judged by the
        # measured error), so they are restored and reported.
        flags = [("torch.get_num_threads()", torch.get_num_threads, torch.set_num_threads, True),
                 ("the default dtype", torch.get_default_dtype, torch.set_default_dtype, False),
                 ("grad mode", torch.is_grad_enabled, torch.set_grad_enabled, False),
                 ("gc enabled", gc.isenabled, lambda on: gc.enable() if on else gc.disable(), True),
                 ("sys.settrace", sys.gettrace, sys.settrace, True),
                 ("sys.setprofile", sys.getprofile, sys.setprofile, True)]
        for name in ("allow_tf32", "benchmark", "deterministic", "enabled"):
            flags.append((f"torch.backends.cudnn.{name}", lambda n=name: getattr(backends.cudnn, n),
                          lambda value, n=name: setattr(backends.cudnn, n, value), False))
        flags.append(("torch.backends.cuda.matmul.allow_tf32", lambda: backends.cuda.matmul.allow_tf32,
                      lambda value: setattr(backends.cuda.matmul, "allow_tf32", value), False))
        if hasattr(torch, "get_float32_matmul_precision"):
            flags.append(("float32 matmul precision", torch.get_float32_matmul_precision,
                          torch.set_float32_matmul_precision, False))
        flags += self._optional_flags(torch)
        self.flags = [(name, get, put, fails, get()) for name, get, put, fails in flags]
        self.get_rng, self.set_rng = torch.get_rng_state, torch.set_rng_state
        self.rng = self.get_rng()
        self.environment = dict(os.environ)
        self.enumerate_threads = threading.enumerate
        self.threads = set(threading.enumerate())
        self.changed = set()   # changes that fail the candidate
        self.reported = set()  # changes restored and reported only

    @staticmethod
    def _optional_flags(torch):
        """Backend choices that torch reads at each call, where this torch has them: left set, they
        would choose the baseline's attention, matmul reduction, linear algebra or CPU kernels.
        Their functions are bound now, as the other flags' are (torch.backends is not among the
        namespaces restored)."""
        backends = torch.backends
        cuda = backends.cuda

        def sdp(kind):
            get, put = getattr(cuda, f"{kind}_sdp_enabled"), getattr(cuda, f"enable_{kind}_sdp")
            return f"torch.backends.cuda.enable_{kind}_sdp", get, put

        def attribute(owner, owner_name, name):
            # torch.backends.cuda.matmul answers through a __getattr__ of its own
            return (f"{owner_name}.{name}", lambda: getattr(owner, name),
                    lambda value: setattr(owner, name, value))

        def deterministic():
            enabled = torch.are_deterministic_algorithms_enabled
            warn_only = torch.is_deterministic_algorithms_warn_only_enabled
            use = torch.use_deterministic_algorithms
            return ("deterministic algorithms", lambda: (enabled(), warn_only()),
                    lambda value: use(value[0], warn_only=value[1]))

        makers = [lambda k=kind: sdp(k) for kind in ("flash", "mem_efficient", "math", "cudnn")]
        makers += [lambda n=name: attribute(cuda.matmul, "torch.backends.cuda.matmul", n)
                   for name in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")]
        makers += [lambda: ("torch.backends.cuda.preferred_linalg_library", cuda.preferred_linalg_library,
                            cuda.preferred_linalg_library),
                   lambda: attribute(backends.mkldnn, "torch.backends.mkldnn", "enabled"),
                   lambda: attribute(backends.opt_einsum, "torch.backends.opt_einsum", "enabled"),
                   deterministic]
        flags = []
        for make in makers:
            # What this torch lacks raises AttributeError, or AssertionError from its backends.
            try:
                name, get, put = make()
                get()
            except Exception:
                continue
            flags.append((name, get, put, False))
        return flags

    def restore(self):
        """Puts everything back, noting (once each, on stderr too) what the candidate had changed."""
        changed = []
        reported = []
        for name, space, saved in self.spaces:
            current = vars(space)
            # A submodule that an import attaches (`import torch.utils.cpp_extension`) is what
            # importing does, not a change to what the baseline calls.
            for key in [k for k in current if k not in saved and not isinstance(current[k], types.ModuleType)]:
                changed.append(f"added {name}.{key}")
                delattr(space, key)
            for key, value in saved.items():
                if current.get(key, saved) is not value:
                    changed.append(f"replaced {name}.{key}")
                    setattr(space, key, value)
        for name, get, put, fails, value in self.flags:
            if get() != value:
                (changed if fails else reported).append(f"set {name}")
                put(value)
        if not self.torch.equal(self.get_rng(), self.rng):
            self.set_rng(self.rng)  # drawing numbers moves it: restored, not reported
        current = dict(os.environ)
        if current != self.environment:
            # torch and CUDA read variables lazily (its allocator's, at the first allocation), so a
            # variable set for a moment can outlive its restore; the builder's cannot (never run here).
            names = sorted(key for key in current.keys() | self.environment.keys()
                           if current.get(key) != self.environment.get(key))
            runtime = [name for name in names if name not in BUILD_ONLY_VARIABLES]
            if runtime:
                changed.append(f"changed the environment ({', '.join(runtime)})")
            else:
                reported.append(f"set build-only environment variables ({', '.join(names)})")
            os.environ.clear()
            os.environ.update(self.environment)
        for changes, seen in ((changed, self.changed), (reported, self.reported)):
            for change in changes:
                if change not in seen:
                    seen.add(change)
                    print(f"ksmith: candidate changed process state (restored): {change}", file=sys.stderr)

    def running_threads(self):
        return [t for t in self.enumerate_threads() if t not in self.threads and t.is_alive()]


class CandidateRunner(Runner):
    """The Runner for ModelNew: built like the problem's Model (its init inputs, seed 0), given the
    task's weights, its outputs checked, and the process restored around it."""

    def __init__(self, spec, role):
        super().__init__(spec, role)
        # What building ModelNew was doing, while it is (None once built): an exception raised
        # then is a compile_error (KernelBench's "compiled: false"), later a runtime_error.
        self.building = None
        self.extensions = self._install_build(spec.get("build") or {}, spec["candidate_source"])
        self.triton_launches = 0
        self.triton_watched = False
        self.state = ProcessState(self.torch)
        register_source(spec.get("candidate_file", "<candidate>"), spec["candidate_source"])
        try:
            self.candidate_code = compile(spec["candidate_source"], spec.get("candidate_file", "<candidate>"), "exec")
        except SyntaxError as error:
            raise CandidateError(f"the candidate is not Python: {error.msg} at line {error.lineno}")

    def _install_build(self, build, source):
        """What the build sandbox built: Triton's cache (read-only here: its JIT cannot run its
        compilers in the worker), the answers of the tools' version queries, and load_inline/load
        that import the extensions it built."""
        if build.get("triton_directory"):
            os.environ["TRITON_CACHE_DIR"] = build["triton_directory"]
        import subprocess
        ProgramReplay(subprocess, build.get("programs", []))
        pin_platform_architecture()
        if not build.get("extensions") and "cpp_extension" not in source:
            return None
        import torch.utils.cpp_extension as cpp_extension
        return ExtensionLoader(cpp_extension, build["extensions_directory"], build.get("extensions", []))

    def _watch_triton(self):
        """Counts Triton kernel launches (JITFunction.run, which autotuned kernels call too), once
        the candidate has imported Triton."""
        jit = sys.modules.get("triton.runtime.jit")
        function_class = getattr(jit, "JITFunction", None)
        if self.triton_watched or function_class is None:
            return
        original = function_class.run
        runner = self

        def run(self, *args, **kwargs):
            runner.triton_launches += 1
            return original(self, *args, **kwargs)
        function_class.run = run
        self.triton_watched = True

    def _custom_code_calls(self):
        return (self.extensions.calls if self.extensions is not None else 0) + self.triton_launches

    def _build(self, namespace):
        torch = self.torch
        candidate = {"__name__": "kernelbench_candidate", "__file__": self.spec.get("candidate_file", "<candidate>")}
        try:
            self.building = "importing the candidate"
            exec(self.candidate_code, candidate)
            model_class = candidate.get("ModelNew")
            if model_class is None:
                raise CandidateError("the candidate defines no ModelNew (KernelBench's format: class ModelNew(nn.Module))")
            self.building = "ModelNew(*get_init_inputs())"
            torch.manual_seed(0)
            model = model_class(*namespace["get_init_inputs"]())
            if self.cuda:
                model = model.cuda()
        finally:
            self.state.restore()
        self._watch_triton()
        self.building = "binding Model's parameters to ModelNew's"
        return model

    def _model(self, constants, dims):
        entry = super()._model(constants, dims)
        self.building = None
        return entry

    def _weights(self, model, dims):
        """Model's parameter paths -> ModelNew's tensors: the same name and shape, else the same
        position among parameters and the same shape."""
        own = dict(model.named_parameters())
        own.update(dict(model.named_buffers()))
        wanted = [t for t in self.spec["inputs"] if t["kind"] == "parameter"]
        shape = lambda tensor: tuple(dims[d] for d in tensor["shape"])
        if all(t["path"] in own and tuple(own[t["path"]].shape) == shape(t) for t in wanted):
            return {t["path"]: own[t["path"]] for t in wanted}
        ordered = list(model.parameters())
        if len(ordered) == len(wanted) and all(tuple(p.shape) == shape(t) for p, t in zip(ordered, wanted)):
            return {t["path"]: p for t, p in zip(wanted, ordered)}
        names = ", ".join(f"{t['path']} {list(shape(t))}" for t in wanted)
        raise CandidateError(f"ModelNew's parameters do not match Model's ({names or 'none'}) by name or by order "
                             f"and shape; it has {[(n, list(p.shape)) for n, p in model.named_parameters()]}")

    def _check_outputs(self, results, input_views):
        torch = self.torch
        for index, result in enumerate(results):
            if type(result) is not torch.Tensor:
                raise CandidateError(f"output {index} is a {type(result).__name__}, not a plain torch.Tensor")
            start = result.data_ptr()
            end = start + result.numel() * result.element_size()
            for name, view in input_views:
                view_start = view.data_ptr()
                view_end = view_start + view.numel() * view.element_size()
                if start < view_end and view_start < end and result.numel() > 0:
                    raise CandidateError(f"output {index} shares memory with input {name}: an output must be a "
                                         "tensor of its own, computed by the call")

    def finish(self, stream=0):
        try:
            super().finish(stream)
        finally:
            self.guard()  # the worker goes on after a raised check: the state is put back all the same

    def guard(self):
        """Process state put back, and no thread of the candidate's left running: after each of its
        calls, and (the shim's ksmith_restore_state) after each of the baseline's timed calls."""
        self.state.restore()
        running = self.state.running_threads()
        if running:
            raise CandidateError(f"{len(running)} Python thread(s) it started still run after its call "
                                 f"({', '.join(t.name for t in running)}): its work must end with the call")


def ksmith_state_changes(key):
    """The shim's ksmith_state_changes: what the candidate changed (each undone; "changes" fail it,
    "restored" are reported only) and how many of its calls ran none of its own compiled code, as JSON."""
    import json
    runner = runners.get(key)
    if not isinstance(runner, CandidateRunner):
        return json.dumps({"changes": []})
    return json.dumps({"changes": sorted(runner.state.changed), "restored": sorted(runner.state.reported),
                       "calls": runner.calls,
                       "calls_without_custom_code": runner.calls_without_custom_code})


def ksmith_guard(key, stream=0):
    """The shim's ksmith_restore_state: the candidate's guard, by the worker's call."""
    runner = runners.get(key)
    if isinstance(runner, CandidateRunner):
        try:
            runner.guard()
        except BaseException as error:
            return report_raised(key, error, "its process-state guard")
    return None


def report_raised(key, error, doing):
    """What the candidate raised, as the shim passes it to the worker (ksmith_candidate_raised):
    JSON {"at": "build" or "call", "message"}. The traceback goes to the worker's log. Its own
    text is read defensively: the exception is the candidate's object."""
    import json
    import traceback
    try:
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.__stderr__)
    except BaseException:
        pass
    runner = runners.get(key)
    at = "call"
    if not isinstance(runner, CandidateRunner):
        doing, at = "importing the candidate", "build"  # the runner itself could not be made
    else:
        runner.pending, runner.checked = [], None  # nothing of a failed call is copied or checked
        if runner.building:
            doing, at = runner.building, "build"
    try:
        said = str(error)
    except BaseException:
        said = "(its message could not be read)"
    name = type(error).__name__
    message = said if isinstance(error, CandidateError) else f"{doing} raised {name}" + (f": {said}" if said else "")
    return json.dumps({"at": at, "message": message[:2000]})
