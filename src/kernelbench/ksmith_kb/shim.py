# The entries the generated C++ shim calls (kernelbench/shim.cc): one runner per (task, role), made
# on the first call. A candidate's shim also calls candidate.py's guard and its report of the
# process state, which only it carries.
from .runner import Runner

# key ("task/role", as the shim names its runner) -> the runner made by its first call
runners = {}


def role_of(key):
    return key.rpartition("/")[2]


def make_runner(spec, role):
    """The runner of a role. Only the candidate's and the compiled baseline's modules are imported
    here, so that a shim carries only the modules its role needs."""
    kind = role[len("cuda_"):] if role.startswith("cuda_") else role
    if kind == "candidate":
        from .candidate import CandidateRunner
        return CandidateRunner(spec, role)
    if kind == "compiled":
        from .compiled import make_compiled_runner
        return make_compiled_runner(spec, role)
    return Runner(spec, role)


def _raised(key, error, doing):
    """What a shim's entry does with an exception. A trusted role's is raised on (the shim aborts:
    the problem's model or ksmith failed); a candidate's becomes a report of it (candidate.py),
    which the worker passes on. Every role's entry has the same try, so that neither side's timed
    call does work the other's does not."""
    if role_of(key).endswith("candidate"):
        from .candidate import report_raised
        return report_raised(key, error, doing)
    raise error


def ksmith_warm(key, spec_json):
    """What every role's first call pays once per process, paid before it: torch's import (from the
    importing python's search path, as the first call adds it) and, on the GPU, its CUDA state.
    Launches no kernel (the worker attributes every launch it sees to a call) and makes no runner.
    Only a head start: whatever fails here is left for the first call to meet and report."""
    try:
        _add_search_path(spec_json)
        import torch
        if role_of(key).startswith("cuda_"):
            torch.cuda.init()
    except BaseException:  # noqa: BLE001 (the first call raises it again, where it is reported)
        pass
    return None


def _add_search_path(spec_json):
    """The importing python's search path (a virtual environment's site-packages, say): the
    embedded interpreter starts from the base installation's."""
    import json
    import sys
    spec = json.loads(spec_json)
    for entry in reversed(spec.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    return spec


def ksmith_finish(key, stream=0):
    runner = runners.get(key)
    try:
        if runner is not None:
            runner.finish(stream)
    except BaseException as error:
        return _raised(key, error, "checking and copying its outputs")
    return None


def ksmith_call(key, spec_json, role, input_addresses, output_addresses, dim_values, stream=0):
    """The shim's entry: returns None, or what _raised makes of an exception (SystemExit too:
    sys.exit() in a candidate's forward is its error)."""
    try:
        _call_runner(key, spec_json, role, input_addresses, output_addresses, dim_values, stream)
    except BaseException as error:
        return _raised(key, error, "ModelNew's forward")
    return None


def _call_runner(key, spec_json, role, input_addresses, output_addresses, dim_values, stream):
    runner = runners.get(key)
    if runner is None:
        import sys
        spec = _add_search_path(spec_json)
        if not getattr(sys, "argv", None):
            sys.argv = ["ksmith"]
        runner = make_runner(spec, role)
        runners[key] = runner
    runner(input_addresses, output_addresses, dim_values, stream)
