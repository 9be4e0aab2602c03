# Runs a KernelBench problem's Model for ksmith: trusted code, embedded in the reference shim
# (float64, in the evaluator's process) and in the baseline shim (float32 torch eager, in the
# worker), which call it through shim.py. The importer (importer.py) uses the same loader, so that
# the model it analysed is the model these shims run.
import ast
import ctypes
import threading

DIM_HOOK = "__ksmith_dim__"


def _int_literal(node):
    """An integer written as a literal or as arithmetic on literals (`N = 2048 * 2`)."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _int_literal(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow,
                                                          ast.LShift)):
        return _int_literal(node.left) and _int_literal(node.right)
    return False


def _int_value(node):
    return eval(compile(ast.Expression(body=node), "<constant>", "eval"), {"__builtins__": {}})


def rewrite_constants(source, filename="<problem>"):
    """Parses the problem and routes every module-level integer constant through DIM_HOOK, so that
    the constant can be given another value and everything computed from it follows (bias_shape =
    (out_channels, 1, 1)). Returns (code, constants) with constants as [(name, value)] in source
    order. `a = b = 128` is one constant, named `a`; a tuple or list of integers (`layer_sizes =
    [400, 800]`) gives `name_0`, `name_1`."""
    tree = ast.parse(source, filename=filename)
    constants = []
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        # `depth, height, width = 16, 32, 32`: one constant per name.
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple)
                and len(node.targets[0].elts) == len(node.value.elts)
                and all(isinstance(t, ast.Name) for t in node.targets[0].elts)):
            for target, element in zip(node.targets[0].elts, node.value.elts):
                if _int_literal(element):
                    constants.append((target.id, _int_value(element)))
                    node.value.elts[node.value.elts.index(element)] = _hook_call(target.id, constants[-1][1], element)
            continue
        if not all(isinstance(t, ast.Name) for t in node.targets):
            continue
        name = node.targets[0].id
        if _int_literal(node.value):
            constants.append((name, _int_value(node.value)))
            node.value = _hook_call(name, constants[-1][1], node.value)
        elif (isinstance(node.value, (ast.Tuple, ast.List)) and node.value.elts
              and all(_int_literal(e) for e in node.value.elts)):
            for i, element in enumerate(node.value.elts):
                constants.append((f"{name}_{i}", _int_value(element)))
                node.value.elts[i] = _hook_call(f"{name}_{i}", constants[-1][1], element)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec"), constants


def _hook_call(name, value, where):
    call = ast.Call(func=ast.Name(id=DIM_HOOK, ctx=ast.Load()),
                    args=[ast.Constant(value=name), ast.Constant(value=value)], keywords=[])
    return ast.copy_location(call, where)


def load_problem(code, overrides, module_name="kernelbench_problem"):
    """Executes the rewritten problem with `overrides` ({constant: value}) in a fresh namespace."""
    namespace = {"__name__": module_name, DIM_HOOK: lambda name, value: overrides.get(name, value)}
    exec(code, namespace)
    return namespace


def as_tuple(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "int32": "int32", "fp64": "float64"}


# numpy's type strings for __cuda_array_interface__; bf16 has none and travels as 16-bit integers.
CUDA_TYPESTR = {"fp32": "<f4", "fp16": "<f2", "bf16": "<i2", "int32": "<i4", "fp64": "<f8"}


class _DeviceBuffer:
    """A device pointer as torch.as_tensor reads one (no copy)."""

    def __init__(self, address, shape, typestr):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (address, False),
                                         "version": 2, "strides": None}


class Runner:
    """Calls the problem's model on ksmith's buffers. role: "reference" (outputs are float64
    buffers, the model runs in spec["reference_dtype"]) or "baseline" (the task's own dtypes,
    torch eager as a user would call it: float32, torch's default threads, no_grad); "cuda_"
    before either: the same on the GPU, on device pointers, on the caller's stream."""

    def __init__(self, spec, role):
        import torch
        self.torch = torch
        self.spec = spec
        self.cuda = role.startswith("cuda_")
        self.role = role[len("cuda_"):] if self.cuda else role
        self.code, _ = rewrite_constants(spec["source"], spec.get("file", "<problem>"))
        self.compute_dtype = getattr(torch, spec["reference_dtype"]) if self.role == "reference" else None
        self.models = {}
        self.views = {}
        self.streams = {}
        # The baseline's (and a candidate's) outputs, copied into ksmith's buffers by finish(),
        # outside the timed call: torch writes its own tensors, and the copy would be timed as if
        # it were the model's work.
        self.pending = []
        self.checked = None  # the last call's (outputs, inputs), for _check_outputs in finish()
        if self.cuda:
            # Full float32, as ksmith's own CUDA baselines (cuBLAS with TF32 off): TF32 convolutions
            # (cuDNN's default) err by about 1e-3, which no float32 tolerance passes.
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        # The evaluator calls its reference from several threads at once (the case feed prepares
        # the next case while this one is judged), and torch lets go of the GIL inside each op:
        # the cached model's parameters are shared state, so one call runs at a time.
        self.lock = threading.Lock()
        # What a benchmark of kernel generation counts (a candidate's runner): calls that ran none
        # of the candidate's own compiled code, as far as Python can see. Every role counts, so
        # that the candidate's timed call does no work the baseline's does not.
        self.calls = 0
        self.calls_without_custom_code = 0

    def _custom_code_calls(self):
        """How many times the model's own compiled code ran so far: none in the problem's Model."""
        return 0

    def _view(self, address, shape, dtype_name):
        key = (address, tuple(shape), dtype_name)
        view = self.views.get(key)
        if view is None:
            torch = self.torch
            dtype = getattr(torch, TORCH_DTYPES[dtype_name])
            count = 1
            for extent in shape:
                count *= extent
            if self.cuda:
                view = torch.as_tensor(_DeviceBuffer(address, shape, CUDA_TYPESTR[dtype_name]), device="cuda")
                if dtype_name == "bf16":
                    view = view.view(torch.bfloat16)
            else:
                nbytes = count * torch.tensor([], dtype=dtype).element_size()
                buffer = (ctypes.c_char * max(nbytes, 1)).from_address(address)
                view = torch.frombuffer(buffer, dtype=dtype, count=count).view(tuple(shape))
            if len(self.views) > 512:
                self.views.clear()
            self.views[key] = view
        return view

    def _model(self, constants, dims):
        """(model, {parameter path: the tensor that ksmith's buffer becomes}) at these sizes."""
        key = tuple(sorted(constants.items()))
        entry = self.models.get(key)
        if entry is None:
            model = self._build(load_problem(self.code, constants))
            entry = (model, self._weights(model, dims))
            if len(self.models) > 16:
                self.models.clear()
            self.models[key] = entry
        return entry

    def _build(self, namespace):
        torch = self.torch
        torch.manual_seed(0)
        model = namespace["Model"](*namespace["get_init_inputs"]())
        if self.compute_dtype is not None:
            model = model.to(self.compute_dtype)
        if self.cuda:
            model = model.cuda()
        return model

    def _weights(self, model, dims):
        tensors = dict(model.named_parameters())
        tensors.update(dict(model.named_buffers()))
        return tensors

    def _check_outputs(self, results, input_views):
        """The candidate's runner checks what it returned; the trusted roles need not."""

    def _on_stream(self, stream, work):
        if not self.cuda:
            return work()
        # Everything is enqueued on the caller's stream: the results are complete when the work
        # on that stream is, as the CUDA contract asks.
        external = self.streams.get(stream)
        if external is None:
            external = self.torch.cuda.ExternalStream(stream)
            self.streams[stream] = external
        with self.torch.cuda.stream(external):
            return work()

    def __call__(self, input_addresses, output_addresses, dim_values, stream=0):
        with self.lock:
            before = self._custom_code_calls()
            self._on_stream(stream, lambda: self._call(input_addresses, output_addresses, dim_values))
            self.calls += 1
            if self._custom_code_calls() == before:
                self.calls_without_custom_code += 1

    def finish(self, stream=0):
        """Copies the baseline's last outputs into ksmith's buffers (the shim's ksmith_finish)."""
        with self.lock:
            if self.checked is not None:
                results, given = self.checked
                self.checked = None
                self._check_outputs(results, given)  # before the copy, which a lazy output would defer into
            pending, self.pending = self.pending, []

            def copy():
                for destination, result in pending:
                    destination.copy_(result.reshape(destination.shape))
            self._on_stream(stream, copy)

    def _call(self, input_addresses, output_addresses, dim_values):
        torch = self.torch
        spec = self.spec
        dims = dict(zip(spec["dims"], dim_values))
        constants = {constant: dims[dim] for constant, dim in spec["constant_dims"].items()}
        model, tensors = self._model(constants, dims)
        shape = lambda tensor: [dims[d] for d in tensor["shape"]]
        # forward()'s arguments in order: tensors from ksmith's buffers, and the plain numbers
        # get_inputs() gives (a scalar factor), which the task keeps fixed.
        arguments = [None] * (len([t for t in spec["inputs"] if t["kind"] == "input"]) + len(spec.get("scalars", [])))
        for scalar in spec.get("scalars", []):
            arguments[scalar["index"]] = scalar["value"]
        given = []
        with torch.no_grad():
            for tensor, address in zip(spec["inputs"], input_addresses):
                view = self._view(address, shape(tensor), tensor["dtype"])
                given.append((tensor["name"], view))
                if "integers" in tensor:
                    # ksmith's int32 as the problem's own integer type (int64 labels, a bool mask).
                    view = view.to(getattr(torch, tensor["integers"]["torch_dtype"]))
                elif self.compute_dtype is not None:
                    view = view.to(self.compute_dtype)
                if tensor["kind"] == "input":
                    arguments[tensor["index"]] = view
                elif self.compute_dtype is not None:
                    tensors[tensor["path"]].copy_(view)
                else:
                    # torch eager reads its weights where they are: no copy inside the timed call.
                    tensors[tensor["path"]].data = view
            results = as_tuple(model(*arguments))
            # A candidate's outputs are checked in finish(), outside the timed call, as the copy is:
            # ksmith's own checks must not cost the candidate time the baseline does not pay.
            if self.role != "reference":
                self.checked = (results, given)
            if len(results) != len(spec["outputs"]):
                raise RuntimeError(f"the model returned {len(results)} outputs, the task declares {len(spec['outputs'])}")
            self.pending = []
            for tensor, address, result in zip(spec["outputs"], output_addresses, results):
                dtype = "fp64" if self.role == "reference" else tensor["dtype"]
                destination = self._view(address, shape(tensor), dtype)
                if result.numel() != destination.numel():
                    raise RuntimeError(f"output '{tensor['name']}' has shape {list(result.shape)}, "
                                       f"the task expects {shape(tensor)}")
                if self.role != "reference":
                    self.pending.append((destination, result))
                else:
                    destination.copy_(result.reshape(destination.shape))

