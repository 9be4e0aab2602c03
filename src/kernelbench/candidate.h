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
#include "task/expression.h"

namespace ksmith {

/// The C++ the worker loads for ModelNew: the task's candidate shim (CUDA's where `cuda`), from
/// its analysis (kernelbench.json), with the candidate's Python and its build (the build folder and
/// the manifest the build sandbox wrote) embedded. Fails, saying why, for a source the generated
/// quoting cannot hold.
Result<std::string> RenderKernelBenchCandidate(const nlohmann::json& analysis, std::string_view python_source,
                                               std::string_view candidate_name, bool cuda,
                                               const std::filesystem::path& build_directory,
                                               const nlohmann::json& manifest);

/// The problem's own sizes ("batch_size=4096, dim=393216") where `shape` (a task's bench shape)
/// is not them (the importer halved them to fit the backend), else empty.
std::string ProblemSizesWhereReduced(const nlohmann::json& analysis, const DimValues& shape);

}  // namespace ksmith
