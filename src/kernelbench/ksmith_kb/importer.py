# Works out a ksmith task from each KernelBench problem file: trusted code that `ksmith import
# kernelbench` runs with a python3 that has torch. Prints one JSON object per problem on stdout
# ({"file", "status": "imported" | "skipped", "reason", "spec"}). Each problem is analysed in a
# forked child under a time and memory limit, so a problem that hangs or explodes costs only itself.
import argparse
import fcntl
import json
import os
import re
import resource
import select
import signal
import sys
import time
import traceback

from .flops import flops_expression
from .runner import as_tuple, load_problem, rewrite_constants

# Constants whose name says they are a hyperparameter, not a size: they keep their value.
HYPERPARAMETER = re.compile(r"kernel|stride|pad|dilation|group|axis|eps|slope|momentum|scale|factor|prob|"
                            r"dropout|^p$|alpha|beta|gamma|margin|threshold|^min|^max|value|top_?k|"
                            r"num_classes|bias_shape", re.IGNORECASE)
AXIS_NAME = re.compile(r"^(dim|reduce_dim|reduction_dim)$", re.IGNORECASE)
SMALL_ELEMENTS = 1 << 20        # the analysis shape: every tensor at most this many elements
EVAL_MAX_ELEMENTS = 1 << 22     # hidden eval shapes on the CPU
BENCH_MAX_BYTES = 64 << 20      # CPU bench: every tensor together
BENCH_MAX_SECONDS = 4.0         # the float64 reference at the bench shape
# GPU bench: every tensor together may take the importing GPU's memory over this (an evaluation
# holds several sets of them: the case and its snapshot, the timing sets, the candidate's and the
# baseline's own outputs, the float64 reference's in another process), unless --gpu-bench-bytes says.
GPU_MEMORY_FACTOR = 10
GPU_LOCK_PATH = None  # set by main(): children try large GPU shapes one at a time
GPU_BENCH_BYTES = 0   # set by main() from --gpu-bench-bytes
DISTRIBUTIONS = ("normal", "uniform", "large")
FLOAT_DTYPES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16"}
INDEX_DTYPES = {"torch.int64", "torch.int32"}
# Integer inputs reach the kernel as int32 and the model as their own type.
INTEGER_DTYPES = {"torch.int64": "int64", "torch.int32": "int32", "torch.int16": "int16", "torch.int8": "int8",
                  "torch.uint8": "uint8", "torch.bool": "bool"}
MAX_INTEGER_SPAN = 1 << 24      # ksmith draws integers exactly as floats


class Refused(Exception):
    """The problem cannot be a task; the message says why."""


def slug(text):
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]+", "_", text.lower())).strip("_")[:40].strip("_")


def task_name(path, level):
    stem = os.path.splitext(os.path.basename(path))[0]
    match = re.match(r"^(\d+)_(.*)$", stem)
    if match:
        return f"kb_l{level}_{int(match.group(1)):03d}_{slug(match.group(2))}", int(match.group(1)), match.group(2)
    return f"kb_l{level}_{slug(stem)}", 0, stem


class Problem:
    def __init__(self, path, torch):
        self.torch = torch
        self.path = path
        try:
            with open(path, encoding="utf-8") as handle:
                self.source = handle.read()
        except UnicodeDecodeError as error:
            raise Refused(f"not a text file ({error.reason} at byte {error.start})")
        try:
            self.code, constants = rewrite_constants(self.source, path)
        except SyntaxError as error:
            raise Refused(f"not Python: {error.msg} at line {error.lineno}")
        except ValueError as error:  # e.g. a NUL byte
            raise Refused(f"not Python: {error}")
        self.defaults = dict(constants)
        namespace = self.load({})
        for required in ("Model", "get_inputs", "get_init_inputs"):
            if not callable(namespace.get(required)):
                raise Refused(f"defines no {required}; a KernelBench problem defines Model, get_inputs and get_init_inputs")

    def load(self, overrides):
        try:
            return load_problem(self.code, overrides)
        except Exception as error:
            raise Refused(f"executing the file raised {type(error).__name__}: {error}")

    def run(self, constants, seed=0, dtype=None, inputs=None, parameters=None, device=None):
        """Builds the model at `constants` and runs it once: (model, inputs, outputs). With
        device="cuda", get_inputs() and the module are made on the GPU (nothing on the host)."""
        torch = self.torch
        if device is not None:
            with torch.device(device):
                return self.run(constants, seed, dtype, inputs, parameters)
        namespace = load_problem(self.code, constants)
        torch.manual_seed(seed)
        self.stage = "get_init_inputs()"
        init_inputs = namespace["get_init_inputs"]()
        self.stage = "Model(*get_init_inputs())"
        model = namespace["Model"](*init_inputs)
        if inputs is None:
            self.stage = "get_inputs()"
            inputs = as_tuple(namespace["get_inputs"]())
        self.stage = "forward()"
        if dtype is not None:
            model = model.to(dtype)
            inputs = tuple(t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs)
        if parameters is not None:
            with torch.no_grad():
                for name, tensor in model.named_parameters():
                    tensor.copy_(parameters[name])
        torch.manual_seed(seed + 1)
        with torch.no_grad():
            outputs = as_tuple(model(*inputs))
        return model, inputs, outputs

    def try_run(self, constants, **options):
        try:
            return self.run(constants, **options)
        except Refused:
            raise
        except Exception as error:
            message = str(error).splitlines()[0] if str(error) else ""
            self.last_error = f"{getattr(self, 'stage', 'the model')} raised {type(error).__name__}: {message}"
            return None


def shapes_of(model, inputs, outputs):
    return ([tuple(t.shape) if hasattr(t, "shape") else None for t in inputs],
            [tuple(p.shape) for _, p in model.named_parameters()],
            [tuple(t.shape) if hasattr(t, "shape") else None for t in outputs])


def parameter_names(record):
    return [name for name, _ in record[0].named_parameters()]


def largest(record):
    """The largest tensor's element count; an empty tensor makes the shape unusable (infinity)."""
    model, inputs, outputs = record
    sizes = [t.numel() for t in list(inputs) + list(outputs) + list(model.parameters()) if hasattr(t, "numel")]
    return float("inf") if not sizes or min(sizes) == 0 else max(sizes)


def total_bytes(record):
    model, inputs, outputs = record
    return sum(t.numel() * t.element_size() for t in list(inputs) + list(outputs) + list(model.parameters())
               if hasattr(t, "numel"))


def size_constants(problem):
    sizes = []
    for name, value in problem.defaults.items():
        if value < 1 or HYPERPARAMETER.search(name) or name == "k" or (AXIS_NAME.match(name) and value <= 8):
            continue
        sizes.append(name)
    return sizes


def scaled(problem, sizes, factor):
    return {name: (value if value <= 16 else max(1, int(round(value * factor))))
            for name, value in problem.defaults.items() if name in sizes}


def find_base(problem, sizes):
    """The analysis shape: the problem's sizes scaled down as little as keeps every tensor within
    SMALL_ELEMENTS (tiny sizes make degenerate cases: a layer norm over one element)."""
    chosen = None
    for factor in (1 / 256, 1 / 128, 1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0):
        constants = scaled(problem, sizes, factor)
        if chosen is not None and constants == chosen[0]:
            continue
        record = problem.try_run(constants)
        if record is None:
            continue
        if largest(record) > SMALL_ELEMENTS:
            break
        chosen = (constants, record)
    if chosen is not None:
        return chosen
    cause = getattr(problem, "last_error", "its tensors stay too large")
    raise Refused(f"the model does not run at any reduced size (every tensor at most {SMALL_ELEMENTS} "
                  f"elements): {cause}")


def find_varying(problem, sizes, base, base_record):
    """The size constants that can change on their own: the model still runs, with the same
    parameters (a layer count changes which exist: it stays fixed), and some tensor's shape follows."""
    base_shapes = shapes_of(*base_record)
    base_parameters = parameter_names(base_record)
    varying = {}
    for name in sizes:
        works = []
        for value in sorted({1, 2, 3, 5, 7, 13, base[name] + 1, 2 * base[name] + 1} - {base[name]}):
            record = problem.try_run({**base, name: value})
            if (record is not None and shapes_of(*record) != base_shapes and largest(record) <= EVAL_MAX_ELEMENTS
                    and parameter_names(record) == base_parameters):
                works.append(value)
        if len(works) >= 2:
            varying[name] = works
    return varying


def candidate_shapes(problem, varying, base):
    """Hidden eval shapes to try: the analysis shape, every size at its smallest and at an awkward
    (odd) value that ran, single sizes at their smallest, and the problem's sizes scaled to 1/16,
    1/8 and 1/4 plus one (which scales coupled sizes together)."""
    shapes = [dict(base)]
    alone = {name: values for name, values in varying.items() if values}
    shapes.append({**base, **{name: min(values) for name, values in alone.items()}})
    shapes.append({**base, **{name: max(values) for name, values in alone.items()}})
    for name in list(alone)[:3]:
        shapes.append({**base, name: min(alone[name])})
    for factor in (1 / 16, 1 / 8, 1 / 4):
        grown = {name: value + 1 if value > 16 and varying[name] else value
                 for name, value in scaled(problem, list(varying), factor).items()}
        shapes.append({**base, **grown})
    unique = []
    for shape in shapes:
        if shape not in unique:
            unique.append(shape)
    return unique


def halve_together(constants, varying):
    """Halves every varying size above 1 (coupled sizes stay coupled); False when none is left."""
    shrinkable = [name for name in varying if constants[name] > 1]
    for name in shrinkable:
        constants[name] = max(1, constants[name] // 2)
    return bool(shrinkable)


def bench_shape(problem, varying, base, reference_dtype, largest_eval):
    """The CPU timing shape: the problem's own sizes, halved together (coupled sizes stay coupled)
    until every tensor together fits BENCH_MAX_BYTES and the reference, which also runs on the
    bench case, takes at most BENCH_MAX_SECONDS. The reference's time is first extrapolated from
    the largest eval shape, so that hopeless sizes are never run."""
    torch = problem.torch
    dtype = getattr(torch, reference_dtype)
    eval_constants, eval_record = largest_eval
    started = time.perf_counter()
    problem.run(eval_constants, dtype=dtype, inputs=eval_record[1])
    seconds_per_byte = (time.perf_counter() - started) / max(1, total_bytes(eval_record))
    constants = {**base, **{name: problem.defaults[name] for name in varying}}
    for _ in range(48):
        estimate = estimated_bytes(problem, constants)
        if estimate <= BENCH_MAX_BYTES and estimate * seconds_per_byte <= 2 * BENCH_MAX_SECONDS:
            record = problem.try_run(constants)
            if record is not None and total_bytes(record) <= BENCH_MAX_BYTES:
                started = time.perf_counter()
                reference = problem.try_run(constants, dtype=dtype, inputs=record[1])
                if reference is not None and time.perf_counter() - started <= BENCH_MAX_SECONDS:
                    return constants
        if not halve_together(constants, varying):
            return None
    return None


def estimated_bytes(problem, constants):
    """The inputs' bytes at `constants` without allocating them (get_inputs would): the analysis
    shape's bytes scaled by how much every size grew. Exact where inputs are products of sizes,
    an underestimate where a size enters squared; the real run that follows checks the total."""
    base_bytes, base_constants = problem.analysis_bytes
    ratio = 1.0
    for name, value in constants.items():
        if base_constants.get(name, 0) > 0:
            ratio *= value / base_constants[name]
    return base_bytes * ratio


def describe_inputs(problem, record, constants):
    torch = problem.torch
    model, inputs, outputs = record
    described = []
    tensor_count = sum(isinstance(t, torch.Tensor) for t in inputs)
    for index, tensor in enumerate(inputs):
        if isinstance(tensor, (int, float)) and not isinstance(tensor, bool):
            continue  # a plain number: a fixed argument (describe_scalars)
        if not isinstance(tensor, torch.Tensor):
            raise Refused(f"input {index} of get_inputs() is a {type(tensor).__name__}, neither a tensor nor a number")
        name = f"x{index}" if tensor_count > 1 else "x"
        if str(tensor.dtype) in INTEGER_DTYPES:
            described.append({"name": name, "kind": "input", "index": index, "dtype": "int32",
                              "integers": integer_bounds(problem, constants, index, INTEGER_DTYPES[str(tensor.dtype)])})
            continue
        dtype = FLOAT_DTYPES.get(str(tensor.dtype))
        if dtype is None:
            raise Refused(f"input {index} of get_inputs() is {tensor.dtype}, which ksmith cannot draw")
        nonnegative = bool((tensor >= 0).all()) and needs_nonnegative(problem, record, index)
        described.append({"name": name, "kind": "input", "index": index, "dtype": dtype, "nonnegative": nonnegative})
    for name, parameter in model.named_parameters():
        dtype = FLOAT_DTYPES.get(str(parameter.dtype))
        if dtype is None:
            raise Refused(f"parameter {name} is {parameter.dtype}")
        described.append({"name": slug(name.replace(".", "_")) or "weight", "kind": "parameter", "path": name,
                          "dtype": dtype, "draw": parameter_draw(parameter.detach())})
    names = [d["name"] for d in described]
    for i, entry in enumerate(described):
        if names.count(entry["name"]) > 1 or entry["name"] in ("x", "y") and entry["kind"] == "parameter":
            entry["name"] = f"p{i}_{entry['name']}"
    return described


class RandintTrace:
    """Records the bounds of every torch.randint call while active: where get_inputs() draws an
    integer input with randint, its range is exactly what the problem asked for, however few
    values one draw holds (32 labels of 4096 classes say little about the 4096)."""

    def __init__(self, torch):
        self.torch = torch
        self.calls = {}

    def __enter__(self):
        torch, calls, original = self.torch, self.calls, self.torch.randint
        self.original = original

        def randint(*args, **kwargs):
            result = original(*args, **kwargs)
            bounds = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
            high = kwargs.get("high", bounds[1] if len(bounds) >= 2 else bounds[0] if bounds else None)
            low = kwargs.get("low", bounds[0] if len(bounds) >= 2 else 0)
            if isinstance(high, int) and isinstance(low, int):
                calls[id(result)] = (result, low, high)  # the reference keeps the id unique
            return result
        torch.randint = randint
        return self

    def __exit__(self, *exc):
        self.torch.randint = self.original

    def bounds_of(self, tensor):
        entry = self.calls.get(id(tensor))
        return None if entry is None or entry[0] is not tensor else (entry[1], entry[2])


def integer_bounds(problem, constants, index, torch_dtype):
    """[low, high) of integer input `index`: the bounds of the torch.randint call that drew it, or
    else the least and one past the greatest value over several draws at the analysis sizes;
    [0, 2) for a bool. `follows` lists the sizes equal to high there: resolve_integer_ranges names
    the one high varies with."""
    torch = problem.torch
    if torch_dtype == "bool":
        return {"low": 0, "high": 2, "torch_dtype": torch_dtype, "follows": []}
    namespace = problem.load(constants)
    low = high = None
    for seed in range(8):
        torch.manual_seed(seed)
        with RandintTrace(torch) as trace:
            tensor = as_tuple(namespace["get_inputs"]())[index]
        if tensor.numel() == 0:
            raise Refused(f"input {index} of get_inputs() is an empty integer tensor")
        traced = trace.bounds_of(tensor)
        if traced is not None:
            low, high = traced
            break
        low = min(int(tensor.min()), low if low is not None else int(tensor.min()))
        high = max(int(tensor.max()) + 1, high if high is not None else 0)
    if high <= low or high - low > MAX_INTEGER_SPAN or low < -(1 << 31) or high > (1 << 31):
        raise Refused(f"input {index} of get_inputs() holds integers in [{low}, {high}): ksmith draws int32 values "
                      f"from a range of 1 to 2^24 values")
    return {"low": low, "high": high, "torch_dtype": torch_dtype,
            "follows": [name for name, value in constants.items() if value == high]}


def integer_high(integers, constants):
    high = integers["high"]
    return constants[high] if isinstance(high, str) else high


def resolve_integer_ranges(tensors, varying, shaped_records):
    """An integer input's high names the varying size it equals at every shape (labels of a class
    count that varies), else stays the number. Refused where a shape's drawn inputs leave the range:
    a range that follows nothing ksmith can name."""
    for tensor in tensors:
        integers = tensor.get("integers")
        if integers is None:
            continue

        def within(high_at, tensor=tensor, integers=integers):
            for constants, record in shaped_records:
                values = record[1][tensor["index"]]
                if values.numel() and (int(values.min()) < integers["low"] or int(values.max()) >= high_at(constants)):
                    return False
            return True
        for name in integers.pop("follows", []):
            if name in varying and within(lambda constants, name=name: constants[name]):
                integers["high"] = name
                break
        if not within(lambda constants: integer_high(integers, constants)):
            raise Refused(f"input {tensor['index']} of get_inputs() holds integers outside [{integers['low']}, "
                          f"{integers['high']}) at some sizes: its range follows no size ksmith can name")


def describe_scalars(problem, record):
    """The plain numbers among get_inputs(): passed to forward() as they are, in every case."""
    return [{"index": index, "value": value} for index, value in enumerate(record[1])
            if isinstance(value, (int, float)) and not isinstance(value, bool)]


def needs_nonnegative(problem, record, index):
    """Whether an input that get_inputs() draws non-negative must stay so: only where the model is
    undefined for negative values (a log, a square root). Elsewhere torch.rand is only how the
    problem happened to draw, and keeping it would make tasks weak: ReLU of non-negative values is
    the identity, which a copy would pass."""
    torch = problem.torch
    model, inputs, _ = record
    signed = list(inputs)
    signed[index] = torch.randn(inputs[index].shape, dtype=inputs[index].dtype, generator=torch.Generator().manual_seed(5))
    try:
        with torch.no_grad():
            outputs = as_tuple(model(*signed))
    except Exception:
        return True
    return any(t.is_floating_point() and not bool(torch.isfinite(t).all()) for t in outputs)


def parameter_draw(tensor):
    """A parameter is drawn like its initialisation: the same family and scale, fresh values."""
    values = tensor.double().flatten()
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-12 * max(1.0, abs(high)):
        return {"distribution": "uniform", "scale": 0.5 * max(abs(low), 1.0), "offset": low}
    spread = float(values.std()) if values.numel() > 1 else abs(high)
    peak = max(abs(low), abs(high))
    if values.numel() >= 16 and peak > 2.5 * spread:
        return {"distribution": "normal", "scale": spread, "offset": float(values.mean())}
    return {"distribution": "uniform", "scale": peak, "offset": 0.0}


def describe_outputs(problem, record, input_names):
    torch = problem.torch
    described = []
    _, _, outputs = record
    for index, tensor in enumerate(outputs):
        if not isinstance(tensor, torch.Tensor):
            raise Refused(f"output {index} of forward() is a {type(tensor).__name__}, not a tensor")
        if str(tensor.dtype) in FLOAT_DTYPES:
            dtype = FLOAT_DTYPES[str(tensor.dtype)]
        elif str(tensor.dtype) in INDEX_DTYPES:
            dtype = "int32"
        else:
            raise Refused(f"output {index} of forward() is {tensor.dtype}, which ksmith cannot compare")
        name = "y" if len(outputs) == 1 else f"y{index}"
        while name in input_names:
            name = "out_" + name
        described.append({"name": name, "index": index, "dtype": dtype})
    return described


def draw_inputs(problem, tensors, record, distribution, seed, constants):
    """Inputs and parameters as ksmith draws them (in float64): the case's distribution for inputs,
    restricted to their domain, integers from their range, and each parameter's own draw."""
    torch = problem.torch
    model, inputs, _ = record
    generator = torch.Generator().manual_seed(seed)
    parameters = dict(model.named_parameters())
    drawn_inputs, drawn_parameters = [], {}
    for tensor in tensors:
        template = inputs[tensor["index"]] if tensor["kind"] == "input" else parameters[tensor["path"]]
        if "integers" in tensor:
            integers = tensor["integers"]
            values = torch.randint(integers["low"], integer_high(integers, constants), template.shape, generator=generator)
            drawn_inputs.append(values.to(getattr(torch, integers["torch_dtype"])))
            continue
        kind = tensor["draw"]["distribution"] if tensor["kind"] == "parameter" else distribution
        values = torch.randn(template.shape, generator=generator, dtype=torch.float64) if kind != "uniform" else \
            torch.rand(template.shape, generator=generator, dtype=torch.float64) * 2 - 1
        if kind == "large":
            values = values * 1000
        if tensor["kind"] == "parameter":
            values = tensor["draw"]["offset"] + tensor["draw"]["scale"] * values
            drawn_parameters[tensor["path"]] = values
        else:
            drawn_inputs.append(values.abs() if tensor["nonnegative"] else values)
    rounded = {"fp16": torch.float16, "bf16": torch.bfloat16}
    arguments = list(inputs)
    drawn = iter(drawn_inputs)
    for tensor in tensors:
        if tensor["kind"] == "input":
            values = next(drawn)
            if tensor["dtype"] in rounded and "integers" not in tensor:
                values = values.to(rounded[tensor["dtype"]]).double()
            arguments[tensor["index"]] = values
    return tuple(arguments), drawn_parameters


def gpu_bench_budget(torch, configured_bytes):
    """The most bytes the GPU timing shape's tensors may take together: `configured_bytes`, else
    the GPU's memory over GPU_MEMORY_FACTOR (the whole memory, not what is free now: the other
    problems being analysed hold some of it for a moment)."""
    if configured_bytes > 0:
        return configured_bytes
    _, total = torch.cuda.mem_get_info()
    return total // GPU_MEMORY_FACTOR


def gpu_bench_shape(problem, varying, base, budget_bytes):
    """The GPU timing shape: the problem's own sizes, as KernelBench times it, where every tensor
    together fits `budget_bytes` and the model runs there in float32 and float64; else those sizes
    halved together until they do. (constants, record), or None where the GPU cannot run it."""
    torch = problem.torch
    constants = {**base, **{name: problem.defaults[name] for name in varying}}
    lock = open(GPU_LOCK_PATH, "a") if GPU_LOCK_PATH else None
    try:
        if lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
        for _ in range(48):
            record = reference = None
            if estimated_bytes(problem, constants) <= budget_bytes:
                record = problem.try_run(constants, device="cuda")
            if record is not None and total_bytes(record) <= budget_bytes:
                reference = problem.try_run(constants, device="cuda", dtype=torch.float64)
            if reference is not None:
                shapes = record
                del reference
                torch.cuda.empty_cache()
                return constants, shapes
            record = None
            torch.cuda.empty_cache()
            if not halve_together(constants, varying):
                return None
        return None
    finally:
        if lock:
            lock.close()


def representable(problem, tensors, outputs, constants, record, distribution, seed, reference_dtype):
    """Whether torch's float32 can give the reference's answer on one case of `distribution`: both
    finite (no overflow of float32 where float64 does not) and, for indices, equal. How close the
    floats are is for ksmith's own comparison to judge (the importer calibrates with it)."""
    torch = problem.torch
    inputs64, parameters64 = draw_inputs(problem, tensors, record, distribution, seed, constants)
    inputs32 = tuple(t.to(given.dtype) if isinstance(t, torch.Tensor) else t for t, given in zip(inputs64, record[1]))
    parameters32 = {name: p.float() for name, p in parameters64.items()}
    _, _, result32 = problem.run(constants, inputs=inputs32, parameters=parameters32)
    _, _, result64 = problem.run(constants, dtype=getattr(torch, reference_dtype), inputs=inputs64,
                                 parameters=parameters64)
    for output, fast, exact in zip(outputs, result32, result64):
        if output["dtype"] == "int32":
            if not torch.equal(fast.long(), exact.long()):
                return False
        elif not bool(torch.isfinite(exact).all()) or not bool(torch.isfinite(fast).all()):
            return False
    return True


def analyse(path, level, default_threads):
    import torch
    started = time.perf_counter()
    name, problem_id, title = task_name(path, level)
    problem = Problem(path, torch)
    sizes = size_constants(problem)
    base, base_record = find_base(problem, sizes)
    problem.analysis_bytes = (sum(t.numel() * t.element_size() for t in base_record[1] if hasattr(t, "numel")), base)
    tensors = describe_inputs(problem, base_record, base)
    scalars = describe_scalars(problem, base_record)
    outputs = describe_outputs(problem, base_record, {t["name"] for t in tensors})

    # Random references cannot be judged: two runs on the same inputs must agree.
    model, inputs, first = base_record
    torch.manual_seed(12345)
    with torch.no_grad():
        second = as_tuple(model(*inputs))
    if any(not torch.equal(a, b) for a, b in zip(first, second)):
        raise Refused("its output is random (two runs on the same inputs differ: dropout or sampling), "
                      "so no fixed answer exists to verify against")

    reference_dtype, reference_note = "float64", ""
    if problem.try_run(base, dtype=torch.float64, inputs=base_record[1]) is None:
        reference_dtype = "float32"
        reference_note = "an operator of this model has no float64 kernel: the reference runs in float32"

    varying = find_varying(problem, sizes, base, base_record)
    fixed_base = {**{n: problem.defaults[n] for n in sizes if n not in varying}, **{n: base[n] for n in varying}}
    fixed_record = problem.try_run(fixed_base)
    if fixed_record is None or largest(fixed_record) > EVAL_MAX_ELEMENTS:
        # Sizes that cannot change alone but did change together (a loss whose two inputs must
        # agree): they keep the analysis shape's values and scale together in the hidden shapes.
        for size in sizes:
            if size not in varying and base[size] != problem.defaults[size]:
                varying[size] = []
        fixed_base = dict(base)
    records = []
    for constants in candidate_shapes(problem, varying, fixed_base):
        record = problem.try_run(constants)
        if record is not None and largest(record) <= EVAL_MAX_ELEMENTS:
            records.append((constants, record))
    if not records:
        raise Refused(f"no reduced shape runs: {getattr(problem, 'last_error', 'its tensors stay too large')}")
    resolve_integer_ranges(tensors, varying, records)
    largest_eval = max(records, key=lambda item: total_bytes(item[1]))
    bench = bench_shape(problem, varying, fixed_base, reference_dtype, largest_eval) if varying else None
    if bench is None:
        bench = max(records, key=lambda item: total_bytes(item[1]))[0]
    bench_record = problem.run(bench)

    # The distributions under which torch's own float32 can give the answer at all.
    distributions = []
    check_cases = records[:4]
    for distribution in DISTRIBUTIONS:
        if all(representable(problem, tensors, outputs, constants, record, distribution, seed, reference_dtype)
               for seed, (constants, record) in enumerate(check_cases)):
            distributions.append(distribution)
    if not distributions:
        raise Refused("torch's own float32 cannot give the reference's answer under any input distribution "
                      "(float32 overflows, or indices differ)")

    all_shapes = [c for c, _ in records] + [bench]
    all_records = [r for _, r in records] + [bench_record]
    gpu = (gpu_bench_shape(problem, varying, fixed_base, gpu_bench_budget(torch, GPU_BENCH_BYTES))
           if torch.cuda.is_available() else None)
    if gpu is not None:
        all_shapes.append(gpu[0])
        all_records.append(gpu[1])
    resolve_integer_ranges(tensors, varying, list(zip(all_shapes, all_records)))
    dims, constant_dims, shape_values = assign_dims(varying, tensors, outputs, all_shapes, all_records)
    cpu_values = shape_values[:len(records) + 1]
    flops, flops_note = flops_expression(torch, [record for _, record in records], dims, shape_values[:len(records)])
    return {
        "name": name, "level": level, "problem_id": problem_id, "title": title,
        "file": os.path.abspath(path), "source": problem.source,
        "constants": problem.defaults, "varying": sorted(varying), "constant_dims": constant_dims,
        "dims": dims, "inputs": tensors, "outputs": outputs, "scalars": scalars,
        "shapes": {"dev": [cpu_values[0]], "eval": cpu_values[:-1], "bench": cpu_values[-1]},
        **({"cuda": {"eval": cpu_values, "bench": shape_values[-1], "bench_bytes": total_bytes(gpu[1]),
                     "problem_sizes": all(gpu[0][name] == problem.defaults[name] for name in varying)}}
           if gpu is not None else {}),
        "gpu_constants": {n: problem.defaults[n] for n in varying},
        "reference_dtype": reference_dtype, "reference_note": reference_note,
        "distributions": distributions, "accumulation": 2, "flops": flops, "flops_note": flops_note,
        # torch's own choice, read before the importer narrowed it for its children: the
        # baseline in the worker runs with it.
        "torch": {"version": torch.__version__, "threads": default_threads},
        "python": {"sys_path": [p for p in sys.path if p and not is_importers_own(p)],
                   # base_prefix: a virtual environment's prefix has no standard library of its
                   # own; its site-packages come back through sys_path.
                   "libpython": libpython(), "home": sys.base_prefix, "readable": readable_folders(),
                   "executable": sys.executable},
        "analysis_s": round(time.perf_counter() - started, 3),
    }


def assign_dims(varying, tensors, outputs, shapes, records):
    """Names every tensor axis: a varying constant where the axis equals it in every shape, else a
    dim of its own (`x_d2`) whose value each shape lists."""
    dims = list(varying)
    constant_dims = {name: name for name in varying}
    values = [{name: shape[name] for name in varying} for shape in shapes]
    shaped = [(t, "input") for t in tensors] + [(o, "output") for o in outputs]
    for tensor, role in shaped:
        tensor["shape"] = []
        rank = len(axis_shape(records[0], tensor, role))
        for axis in range(rank):
            extents = [axis_shape(record, tensor, role)[axis] for record in records]
            match = next((name for name in varying if all(s[name] == e for s, e in zip(shapes, extents))), None)
            if match is None:
                match = f"{tensor['name']}_d{axis}"
                dims.append(match)
                for value, extent in zip(values, extents):
                    value[match] = extent
            tensor["shape"].append(match)
    return dims, constant_dims, values


def axis_shape(record, tensor, role):
    model, inputs, outputs = record
    if role == "output":
        return tuple(outputs[tensor["index"]].shape)
    if tensor["kind"] == "input":
        return tuple(inputs[tensor["index"]].shape)
    return tuple(dict(model.named_parameters())[tensor["path"]].shape)


def readable_folders():
    """Where this python's packages live outside the folders ksmith's worker may always read
    (/usr, /lib): a virtual environment's site-packages, say. The baseline runs torch from there."""
    folders = []
    for entry in sys.path + [sys.prefix, sys.base_prefix]:
        for path in {os.path.abspath(entry), os.path.realpath(entry)}:
            if os.path.isdir(path) and not path.startswith(("/usr/", "/lib")) and path != "/usr" and path not in folders:
                if not is_importers_own(path):
                    folders.append(path)
    return folders


def is_importers_own(path, work=None):
    """Whether `path` is the import's temporary folder or inside it (the launcher's folder, the
    package ksmith wrote there): deleted when the import ends, it must reach no task's search
    path, where whoever made that folder again could put a `torch` for the reference to import."""
    if work is None:
        script = sys.argv[0] if sys.argv and sys.argv[0] else __file__
        work = os.path.dirname(os.path.abspath(script))
        if not sys.argv or not sys.argv[0]:  # no launcher: the package's own folder's parent
            work = os.path.dirname(work)
    folder = os.path.realpath(work)
    candidate = os.path.realpath(path)
    return candidate == folder or candidate.startswith(folder + os.sep)


def libpython():
    import sysconfig
    directory, name = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if directory and name:
        for candidate in (os.path.join(directory, name),
                          os.path.join(directory, sysconfig.get_config_var("MULTIARCH") or "", name)):
            if os.path.exists(candidate):
                return candidate
    return ""


def analyse_in_child(path, level, memory_bytes, threads, default_threads, write_fd):
    import torch
    torch.set_num_threads(threads)
    # CUDA reserves far more address space than it uses: no address-space limit where it runs.
    if memory_bytes > 0 and not torch.cuda.is_available():
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    try:
        result = {"status": "imported", "spec": analyse(path, level, default_threads)}
    except Refused as refusal:
        result = {"status": "skipped", "reason": str(refusal)}
    except MemoryError:
        result = {"status": "skipped", "reason": "ran out of memory during analysis"}
    except Exception as error:
        detail = traceback.format_exception_only(type(error), error)[-1].strip()
        result = {"status": "skipped", "reason": f"analysis failed: {detail}"}
    data = json.dumps(result).encode()
    view = memoryview(data)
    while view:
        written = os.write(write_fd, view)
        view = view[written:]
    os._exit(0)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--problem", action="append", default=[], help="LEVEL:PATH, once per problem file")
    parser.add_argument("--results", required=True, help="where the JSON lines go, one per problem")
    parser.add_argument("--timeout-s", type=float, default=120.0)
    parser.add_argument("--memory-bytes", type=int, default=8 << 30)
    parser.add_argument("--gpu-bench-bytes", type=int, default=0, help="0: the GPU's memory / GPU_MEMORY_FACTOR")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 1)))
    arguments = parser.parse_args(argv)
    global GPU_BENCH_BYTES, GPU_LOCK_PATH
    GPU_BENCH_BYTES = arguments.gpu_bench_bytes
    GPU_LOCK_PATH = arguments.results + ".gpu.lock"
    import torch  # once, before forking: each child starts with torch loaded
    default_threads = torch.get_num_threads()
    pending = []
    for item in arguments.problem:
        level, _, path = item.partition(":")
        pending.append((path, int(level)))
    threads = max(1, (os.cpu_count() or 1) // max(1, arguments.jobs))
    results = open(arguments.results, "a", encoding="utf-8")
    running = {}
    while pending or running:
        while pending and len(running) < arguments.jobs:
            path, level = pending.pop(0)
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read_fd)
                analyse_in_child(path, level, arguments.memory_bytes, threads, default_threads, write_fd)
            os.close(write_fd)
            running[read_fd] = {"pid": pid, "path": path, "level": level, "started": time.monotonic(), "data": b""}
        ready, _, _ = select.select(list(running), [], [], 0.2)
        for fd in ready:
            chunk = os.read(fd, 1 << 20)
            if chunk:
                running[fd]["data"] += chunk
                continue
            job = running.pop(fd)
            os.close(fd)
            _, status = os.waitpid(job["pid"], 0)
            emit(results, job, child_result(job, status))
        now = time.monotonic()
        for fd in [fd for fd, job in running.items() if now - job["started"] > arguments.timeout_s]:
            job = running.pop(fd)
            os.kill(job["pid"], signal.SIGKILL)
            os.waitpid(job["pid"], 0)
            os.close(fd)
            emit(results, job, {"status": "skipped", "reason": f"timed out after {arguments.timeout_s:g} s (loading "
                                "the problem or running its model hangs)"})


def child_result(job, status):
    try:
        return json.loads(job["data"].decode())
    except ValueError:
        signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        cause = f"signal {signal_number}" if signal_number else f"exit status {os.WEXITSTATUS(status)}"
        return {"status": "skipped", "reason": f"the analysis process died ({cause})"}


def emit(results, job, result):
    result["file"] = job["path"]
    result["level"] = job["level"]
    result["seconds"] = round(time.monotonic() - job["started"], 3)
    results.write(json.dumps(result) + "\n")
    results.flush()
