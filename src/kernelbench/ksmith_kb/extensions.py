# Compiled extensions of a KernelBench-format candidate (torch.utils.cpp_extension.load_inline and
# load): built once in the build sandbox, which may run the compiler (build.py), and loaded in
# the verifying worker, which may not (no fork, no exec: torch's own load_inline would run ninja).
#
# Both sides name a call by the same key: its arguments, less those that say only where or how
# loudly to build. The build records key -> the module it produced; the worker's load_inline looks
# the key up and imports that module, so a call whose sources differ from the build's (text made
# at run time from the inputs, say) finds nothing and fails, saying why.
import hashlib
import json

EXTENSION_FUNCTIONS = ("load_inline", "load")


def register_source(filename, source):
    """Makes the candidate's source readable by inspect under its file name, which exists on no
    disk here: Triton's @jit reads the source of the functions it compiles."""
    import linecache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


# Where and how loudly to build: not part of what is built.
UNKEYED_ARGUMENTS = ("build_directory", "verbose", "keep_intermediates")


def _read_sources(value):
    """load() names files: the key is their content, so that a changed file is a different build."""
    names = [value] if isinstance(value, str) else list(value or [])
    contents = []
    for name in names:
        try:
            with open(name, "rb") as source:
                contents.append(hashlib.sha256(source.read()).hexdigest())
        except OSError:
            contents.append(f"unreadable:{name}")
    return contents


def extension_key(function_name, function, args, kwargs):
    """The key of one call of cpp_extension.<function_name>, or a TypeError as the real one would give."""
    import inspect
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    arguments = {name: value for name, value in bound.arguments.items() if name not in UNKEYED_ARGUMENTS}
    if function_name == "load":
        arguments["sources"] = _read_sources(arguments.get("sources"))
    text = json.dumps([function_name, arguments], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class ExtensionRecorder:
    """In the build sandbox: wraps load_inline and load so that every extension is built under
    `directory` (TORCH_EXTENSIONS_DIR; a build_directory the candidate names is ignored) and
    recorded as {key, name, module (relative to directory), python_module}."""

    def __init__(self, cpp_extension, directory):
        import os
        self.directory = directory
        self.records = []
        self.failed = ""  # what the compiler said, where a build failed
        for function_name in EXTENSION_FUNCTIONS:
            original = getattr(cpp_extension, function_name)

            def recording(*args, _name=function_name, _original=original, **kwargs):
                key = extension_key(_name, _original, args, kwargs)
                bound = __import__("inspect").signature(_original).bind(*args, **kwargs)
                bound.arguments.pop("build_directory", None)
                try:
                    result = _original(*bound.args, **bound.kwargs)
                except BaseException as error:
                    self.failed = f"{_name}({bound.arguments.get('name')!r}) failed: {error}"
                    raise
                python_module = bound.arguments.get("is_python_module", True)
                path = getattr(result, "__file__", None) if python_module else None
                if python_module and path is None:
                    raise RuntimeError(f"{_name} returned no module file; ksmith cannot load it in the worker")
                if path is None:  # is_python_module=False: torch.ops loaded the library it built
                    name = bound.arguments["name"]
                    path = self._find_library(name)
                self.records.append({"key": key, "name": getattr(result, "__name__", bound.arguments["name"]),
                                     "module": os.path.relpath(path, directory),
                                     "python_module": bool(python_module)})
                return result
            setattr(cpp_extension, function_name, recording)

    def _find_library(self, name):
        import glob
        import os
        found = sorted(glob.glob(os.path.join(self.directory, "**", f"{name}*.so"), recursive=True),
                       key=os.path.getmtime)
        if not found:
            raise RuntimeError(f"the extension {name} was built but its library is not under {self.directory}")
        return found[-1]


class ExtensionLoader:
    """In the worker: load_inline and load that import what the build sandbox built, and count the
    calls into it (a candidate whose forward never calls its own compiled code is reported)."""

    def __init__(self, cpp_extension, directory, records):
        self.directory = directory
        self.by_key = {record["key"]: record for record in records}
        self.loaded = {}
        self.calls = 0
        for function_name in EXTENSION_FUNCTIONS:
            original = getattr(cpp_extension, function_name)

            def loading(*args, _name=function_name, _original=original, **kwargs):
                return self._load(extension_key(_name, _original, args, kwargs), _name)
            setattr(cpp_extension, function_name, loading)

    def _load(self, key, function_name):
        import importlib.util
        import os
        if key in self.loaded:
            return self.loaded[key]
        record = self.by_key.get(key)
        if record is None:
            raise RuntimeError(f"this {function_name} call was not made when the candidate was built (ksmith builds "
                               "extensions once, at import, construction and a first forward, in a sandbox that may "
                               "compile): its arguments differ from every call made then, so there is nothing to load")
        path = os.path.join(self.directory, record["module"])
        if record["python_module"]:
            spec = importlib.util.spec_from_file_location(record["name"], path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module = _CountingModule(module, self)
        else:
            import torch
            torch.ops.load_library(path)
            module = path
        self.loaded[key] = module
        return module


class _CountingModule:
    """An extension module whose functions count their completed calls into the loader."""

    def __init__(self, module, loader):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_loader", loader)

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if not callable(value) or isinstance(value, type):
            return value
        loader = self._loader

        def counted(*args, **kwargs):
            result = value(*args, **kwargs)
            loader.calls += 1  # only a call that returned: one that raised did no work
            return result
        return counted

    def __setattr__(self, name, value):
        setattr(self._module, name, value)

    def __dir__(self):
        return dir(self._module)


# Programs: the worker may run none. Triton asks its tools their versions (`ptxas --version`) to
# key its cache even when the kernel is there already; the build sandbox records what such short
# queries answered, and the worker gives the same answers. Anything else a candidate's code tries
# to run in the worker fails with a message that says why (Triton compiling a specialisation the
# build never saw, say).
MAX_RECORDED_OUTPUT_BYTES = 1 << 16


def _argv_key(args, kwargs):
    argv = args[0] if args else kwargs.get("args")
    if isinstance(argv, (str, bytes)):
        return [str(argv)]
    return [str(part) for part in argv or []]


def _as_text(kwargs):
    return bool(kwargs.get("text") or kwargs.get("universal_newlines") or kwargs.get("encoding") or kwargs.get("errors"))


def pin_platform_architecture():
    """platform.architecture() asks the `file` program about the interpreter, which the verifying
    worker may not run (and whose interpreter is ksmith's worker, not python3): its answer would
    differ between the build sandbox and the worker, and Triton keys the cache of its C modules
    (cuda_utils, its launchers) by it. Both answer it from the interpreter alone, alike."""
    import platform
    import struct
    import sys
    answer = (f"{struct.calcsize('P') * 8}bit", "ELF" if sys.platform.startswith("linux") else "")
    original = platform.architecture

    def architecture(executable=None, bits="", linkage=""):
        if executable is None or executable == sys.executable:
            return answer
        return original(executable, bits, linkage)
    platform.architecture = architecture


def is_query(argv):
    """A tool asked about itself (`ptxas --version`, `ldconfig -p`): the only calls replayed."""
    return len(argv) == 2 and argv[1].startswith("-") and " " not in argv[1]


class ProgramRecorder:
    """In the build sandbox: records what subprocess.check_output answered for queries."""

    def __init__(self, subprocess):
        import base64
        self.records = []
        original = subprocess.check_output

        def encode(output):
            output = output.encode() if isinstance(output, str) else bytes(output or b"")
            return base64.b64encode(output[:MAX_RECORDED_OUTPUT_BYTES]).decode()

        def recording(*args, **kwargs):
            argv = _argv_key(args, kwargs)
            if not is_query(argv):
                return original(*args, **kwargs)
            try:
                result = original(*args, **kwargs)
            except OSError as error:  # the program is not there: the worker says the same
                self.records.append({"argv": argv, "errno": error.errno, "strerror": error.strerror})
                raise
            except subprocess.CalledProcessError as error:
                self.records.append({"argv": argv, "returncode": error.returncode, "output": encode(error.output)})
                raise
            self.records.append({"argv": argv, "returncode": 0, "output": encode(result)})
            return result
        subprocess.check_output = recording


class ProgramReplay:
    """In the worker: check_output answers what the build recorded; every other program fails, saying why."""

    def __init__(self, subprocess, records):
        import base64
        import errno
        answers = {tuple(record["argv"]): record for record in records}

        def refuse(argv):
            # An OSError, as failing to start a program is: callers that probe for a tool catch it.
            raise PermissionError(errno.EPERM, f"ksmith: the verifying worker runs no programs ({' '.join(argv)[:200]}); "
                                  "what needs a compiler must be built when the candidate is imported, built or first "
                                  "called at the problem's sizes (a Triton kernel compiled for a size first seen here "
                                  "cannot be)")

        def replaying(*args, **kwargs):
            argv = _argv_key(args, kwargs)
            record = answers.get(tuple(argv))
            if record is None:
                refuse(argv)
            if "errno" in record:
                raise OSError(record["errno"], record.get("strerror") or "")
            output = base64.b64decode(record.get("output", ""))
            if _as_text(kwargs):
                output = output.decode(kwargs.get("encoding") or "utf-8", errors="replace")
            if record.get("returncode", 0) != 0:
                raise subprocess.CalledProcessError(record["returncode"], argv, output=output)
            return output

        def execute_child(self, args, *rest, **kwargs):
            refuse(_argv_key([args], {}))
        subprocess.check_output = replaying
        subprocess.Popen._execute_child = execute_child
