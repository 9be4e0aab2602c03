# Serves the ksmith_kb package from texts in memory: a generated C++ shim carries the modules its
# role needs inside itself (the sandboxed worker reads no file of ksmith's) and runs this file on
# its own, in a module of its own, to make them importable under a name of their own
# (ksmith_kb_<hash of the texts>), so that shims of other ksmith versions in one process coexist.
import importlib
import importlib.abc
import importlib.util
import sys


class EmbeddedPackage(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads `package` and its modules from {module name: source text}, "__init__" being
    the package itself. Nothing else: every other import goes on to the next finder."""

    def __init__(self, package, sources):
        self.package = package
        self.sources = sources

    def _module(self, fullname):
        if fullname == self.package:
            return "__init__"
        prefix = self.package + "."
        if fullname.startswith(prefix) and fullname[len(prefix):] in self.sources:
            return fullname[len(prefix):]
        return None

    def find_spec(self, fullname, path=None, target=None):
        module = self._module(fullname)
        if module is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=module == "__init__")

    def create_module(self, spec):
        return None  # the default module

    def exec_module(self, module):
        # A file name that is no file: tracebacks show its lines through get_source (linecache).
        filename = f"{self.package}/{self._module(module.__name__)}.py (embedded)"
        exec(compile(self.get_source(module.__name__), filename, "exec"), module.__dict__)

    def get_source(self, fullname):
        return self.sources.get(self._module(fullname), "")


def install(package, module, names_and_sources):
    """Makes `package` importable from (name, text, name, text...), once per process (a later call,
    from another shim with the same texts, finds it installed), and returns its `module`: the C++
    shim calls the entries of "shim" and, a candidate's, of "candidate"."""
    if not any(getattr(finder, "package", None) == package for finder in sys.meta_path):
        sources = dict(zip(names_and_sources[0::2], names_and_sources[1::2]))
        # First: a file of the same name on sys.path must not stand in for it.
        sys.meta_path.insert(0, EmbeddedPackage(package, sources))
    return importlib.import_module(f"{package}.{module}")
