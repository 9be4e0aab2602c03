// KernelBench-format candidates: a Python file defining ModelNew (torch ops, a compiled extension)
// judged on an imported KernelBench task. ksmith turns it into a shim with the task's signature
// that runs ModelNew inside the sandboxed worker, beside the torch-eager baseline, and loads there
// what its build sandbox built (kernelbench/candidate_build.h).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

/// The C++ the worker loads for ModelNew: the task's candidate shim (CUDA's where `cuda`), from
/// its analysis (kernelbench.json), with the candidate's Python and its build (the build folder and
/// the manifest the build sandbox wrote) embedded. Fails, saying why, for a source the generated
/// quoting cannot hold.
Result<std::string> RenderKernelBenchCandidate(const nlohmann::json& analysis, std::string_view python_source,
                                               std::string_view candidate_name, bool cuda,
                                               const std::filesystem::path& build_directory,
                                               const nlohmann::json& manifest);

}  // namespace ksmith
