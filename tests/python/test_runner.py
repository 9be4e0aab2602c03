# runner.py's loading of a problem: every module-level integer constant can take another value,
# and what the problem computes from it follows.
from ksmith_kb.runner import as_tuple, load_problem, rewrite_constants

PROBLEM = """
import math
batch_size = 16
in_channels, out_channels = 3, 64
hidden = width = 2048 * 2
layer_sizes = [400, 800]
offset = -3
eps = 1e-5
training = True
bias_shape = (out_channels, 1, 1)
name = "conv"

def get_inputs():
    return [batch_size * in_channels, sum(layer_sizes), width]
"""


def test_finds_each_integer_constant_in_source_order():
    _, constants = rewrite_constants(PROBLEM)
    assert constants == [("batch_size", 16), ("in_channels", 3), ("out_channels", 64), ("hidden", 4096),
                         ("layer_sizes_0", 400), ("layer_sizes_1", 800), ("offset", -3)]


def test_floats_booleans_strings_and_computed_tuples_are_not_constants():
    _, constants = rewrite_constants(PROBLEM)
    names = {name for name, _ in constants}
    assert not names & {"eps", "training", "name", "bias_shape", "math"}


def test_the_problem_runs_unchanged_without_overrides():
    code, _ = rewrite_constants(PROBLEM)
    namespace = load_problem(code, {})
    assert namespace["bias_shape"] == (64, 1, 1)
    assert namespace["get_inputs"]() == [48, 1200, 4096]
    assert namespace["__name__"] == "kernelbench_problem"


def test_an_override_reaches_everything_computed_from_the_constant():
    code, _ = rewrite_constants(PROBLEM)
    namespace = load_problem(code, {"out_channels": 8, "in_channels": 5, "layer_sizes_1": 1, "hidden": 7})
    assert namespace["bias_shape"] == (8, 1, 1)
    # `hidden = width = ...` is one constant, named by its first target: both names follow it.
    assert namespace["width"] == 7 and namespace["hidden"] == 7
    assert namespace["get_inputs"]() == [16 * 5, 401, 7]
    assert namespace["eps"] == 1e-5


def test_each_load_is_a_fresh_namespace():
    code, _ = rewrite_constants(PROBLEM)
    first = load_problem(code, {"batch_size": 2})
    second = load_problem(code, {})
    assert first["batch_size"] == 2 and second["batch_size"] == 16


def test_a_syntax_error_names_the_file():
    try:
        rewrite_constants("def broken(:\n", "problems/1_Broken.py")
    except SyntaxError as error:
        assert error.filename == "problems/1_Broken.py"
    else:
        raise AssertionError("no SyntaxError")


def test_as_tuple_keeps_sequences_and_wraps_one_result():
    assert as_tuple([1, 2]) == (1, 2)
    assert as_tuple((3,)) == (3,)
    assert as_tuple(5) == (5,)
    assert as_tuple("ab") == ("ab",)
