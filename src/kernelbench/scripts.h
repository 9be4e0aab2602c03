// The trusted Python that `ksmith import kernelbench` and the generated shims run, compiled into
// ksmith from src/kernelbench/*.py so that no install path has to be found at run time.
#pragma once

#include <string_view>

namespace ksmith {

/// kb_import.py: analyses KernelBench problem files, one JSON line per problem.
std::string_view KernelBenchImportScript();
/// kb_runner.py: loads a problem and runs its Model on ksmith's buffers (reference and baseline).
std::string_view KernelBenchRunnerScript();
/// kb_candidate.py: appended to kb_runner.py in a candidate's shim, runs a ModelNew under guard.
std::string_view KernelBenchCandidateScript();
/// kb_extensions.py: the key of a load_inline/load call; records builds (build sandbox) and
/// loads them (worker). In a candidate's shim and in the build script.
std::string_view KernelBenchExtensionsScript();
/// kb_build.py: appended to kb_runner.py and kb_extensions.py, the build sandbox's script.
std::string_view KernelBenchBuildScript();
/// kb_static.py: KernelBench's static checks on a candidate's source, reported by the build.
std::string_view KernelBenchStaticScript();
/// kb_compiled.py: appended to kb_runner.py and kb_extensions.py, torch.compile as the second
/// baseline: the warm step's script (build sandbox) and the compiled baseline's runner (worker).
std::string_view KernelBenchCompiledScript();

}  // namespace ksmith
