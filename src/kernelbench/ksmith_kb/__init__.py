"""ksmith's trusted Python for KernelBench problems, compiled into ksmith (kernelbench/scripts.h).

How each part runs:
- importer.py: `ksmith import kernelbench` writes the package into a folder and runs its main().
- build.py (with static.py): the build sandbox of a KernelBench-format candidate, run the same way.
- compiled.py: torch.compile's warm step, run the same way; in the worker, the compiled baseline.
- shim.py, runner.py, candidate.py, extensions.py: embedded in the generated C++ shims, which serve
  their modules from memory (embedded.py) inside the evaluator's process or the worker.
"""
