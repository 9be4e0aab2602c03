# embedded.py serving ksmith_kb from texts, run as the generated C++ shim runs it: on its own, in a
# namespace of its own, then install(package, module, (name, text, ...)).
import json
import os
import sys
import traceback

import pytest

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "kernelbench", "ksmith_kb")


def read(name):
    with open(os.path.join(PACKAGE_DIR, f"{name}.py"), encoding="utf-8") as source:
        return source.read()


@pytest.fixture
def install():
    """embedded.py's install, as the shim gets it; every package it installs is gone after the test."""
    namespace = {"__name__": "ksmith_kb_test_embedded"}
    exec(compile(read("embedded"), "embedded.py", "exec"), namespace)
    finders = list(sys.meta_path)
    modules = set(sys.modules)
    yield lambda package, module, sources: namespace["install"](
        package, module, tuple(part for name, text in sources.items() for part in (name, text)))
    sys.meta_path[:] = finders
    for name in set(sys.modules) - modules:
        del sys.modules[name]


FAKE = {
    "__init__": "ROOT = 'package'\n",
    "shim": "from .runner import double\nfrom . import runner\n\ndef entry(x):\n    return double(x)\n",
    "runner": "def double(x):\n    return 2 * x\n\ndef fail():\n    raise ValueError('from the embedded text')\n",
}


def test_a_module_imports_its_siblings_from_memory(install):
    shim = install("fake_kb_0001", "shim", FAKE)
    assert shim.__name__ == "fake_kb_0001.shim"
    assert shim.entry(21) == 42
    assert shim.runner is sys.modules["fake_kb_0001.runner"]
    assert sys.modules["fake_kb_0001"].ROOT == "package"


def test_a_second_install_of_the_same_package_reuses_the_first(install):
    first = install("fake_kb_0002", "shim", FAKE)
    finders = len(sys.meta_path)
    assert install("fake_kb_0002", "shim", {"shim": "raise AssertionError('served again')"}) is first
    assert len(sys.meta_path) == finders
    assert install("fake_kb_0002", "runner", FAKE).double(4) == 8


def test_only_the_modules_given_are_served(install):
    install("fake_kb_0003", "shim", FAKE)
    with pytest.raises(ImportError):
        install("fake_kb_0003", "candidate", FAKE)


def test_a_traceback_shows_the_embedded_line(install):
    runner = install("fake_kb_0004", "runner", FAKE)
    with pytest.raises(ValueError) as raised:
        runner.fail()
    text = "".join(traceback.format_exception(raised.value))
    assert "fake_kb_0004/runner.py (embedded)" in text
    assert "raise ValueError('from the embedded text')" in text


def package(*extra):
    """The texts a shim of a role carries (shim_spec.cc)."""
    return {name: read(name) for name in ("__init__", "runner", "shim", *extra)}


def test_a_trusted_shim_raises_what_fails(install):
    shim = install("ksmith_kb_00000000000000aa", "shim", package())
    with pytest.raises(json.JSONDecodeError):
        shim.ksmith_call("kb_l1_019_relu/baseline", "not json", "baseline", (), (), ())
    assert "ksmith_kb_00000000000000aa.candidate" not in sys.modules


def test_a_candidate_shim_reports_what_fails_as_its_build(install):
    shim = install("ksmith_kb_00000000000000bb", "shim", package("extensions", "candidate"))
    report = json.loads(shim.ksmith_call("kb_l1_019_relu/candidate", "not json", "candidate", (), (), ()))
    assert report["at"] == "build"
    assert report["message"].startswith("importing the candidate raised JSONDecodeError")
    candidate = install("ksmith_kb_00000000000000bb", "candidate", {})
    assert json.loads(candidate.ksmith_state_changes("kb_l1_019_relu/candidate")) == {"changes": []}
    assert candidate.ksmith_guard("kb_l1_019_relu/candidate") is None  # no runner: nothing to guard
    assert shim.ksmith_finish("kb_l1_019_relu/candidate") is None
