# extensions.py: the key that names a load_inline/load call on both sides (the build sandbox that
# builds it, the worker that loads it), and which program calls the worker may replay.
import pytest

from ksmith_kb.extensions import _argv_key, extension_key, is_query


def load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None, build_directory=None,
                verbose=False, keep_intermediates=True, is_python_module=True):
    """cpp_extension.load_inline's signature, as far as the key reads it."""


def load(name, sources, extra_cflags=None, build_directory=None, verbose=False, is_python_module=True):
    """cpp_extension.load's signature, as far as the key reads it."""


def key(*args, **kwargs):
    return extension_key("load_inline", load_inline, args, kwargs)


def test_the_same_call_has_the_same_key_however_its_arguments_are_passed():
    assert key("relu", "int f();") == key(name="relu", cpp_sources="int f();")
    assert key("relu", "int f();") == key("relu", "int f();", functions=None)
    assert len(key("relu", "int f();")) == 64


def test_where_and_how_loudly_to_build_are_not_part_of_the_key():
    assert key("relu", "x", build_directory="/tmp/a", verbose=True) == key("relu", "x", keep_intermediates=False)


def test_what_is_built_is():
    base = key("relu", "int f();")
    assert key("relu", "int g();") != base
    assert key("relu2", "int f();") != base
    assert key("relu", "int f();", extra_cflags=["-O3"]) != base
    assert key("relu", "int f();", is_python_module=False) != base
    assert extension_key("load", load, ("relu", []), {}) != extension_key("load_inline", load_inline, ("relu", ""), {})


def test_arguments_the_function_would_refuse_raise_its_type_error():
    with pytest.raises(TypeError):
        key("relu", "x", no_such_argument=1)
    with pytest.raises(TypeError):
        key()


def test_load_keys_its_files_by_content(tmp_path):
    source = tmp_path / "kernel.cu"
    source.write_text("__global__ void k() {}\n")
    first = extension_key("load", load, ("k", [str(source)]), {})
    assert extension_key("load", load, ("k", str(source)), {}) == first  # one name or a list of it
    source.write_text("__global__ void k() { return; }\n")
    assert extension_key("load", load, ("k", [str(source)]), {}) != first
    missing = extension_key("load", load, ("k", [str(tmp_path / "missing.cu")]), {})
    assert missing != first


def test_a_program_is_named_by_its_argv_as_strings():
    assert _argv_key((["ptxas", "--version"],), {}) == ["ptxas", "--version"]
    assert _argv_key(("ldconfig -p",), {}) == ["ldconfig -p"]
    assert _argv_key((), {"args": ("nvcc", 12)}) == ["nvcc", "12"]
    assert _argv_key((), {}) == []


def test_only_a_tool_asked_about_itself_is_a_query():
    assert is_query(["ptxas", "--version"])
    assert is_query(["/sbin/ldconfig", "-p"])
    assert not is_query(["nvcc", "-c", "kernel.cu"])
    assert not is_query(["sh", "-c rm -rf /"])
    assert not is_query(["ptxas", "version"])
