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

/// The C++ the worker loads for ModelNew: the task's candidate shim (CUDA's where `cuda`), from its
/// analysis (kernelbench.json). Its text is the task's alone, the same for every candidate, so
/// that it is compiled once per task; each candidate's spec is written beside a copy of it
/// (WriteKernelBenchCandidate).
Result<std::string> RenderKernelBenchCandidateShim(const nlohmann::json& analysis, bool cuda);

/// The spec a candidate's shim reads (kCandidateSpecFile): the task's, with the candidate's Python
/// and its build (the build folder and the manifest the build sandbox wrote).
Result<std::string> KernelBenchCandidateSpec(const nlohmann::json& analysis, std::string_view python_source,
                                             std::string_view candidate_name, bool cuda,
                                             const std::filesystem::path& build_directory,
                                             const nlohmann::json& manifest);

/// Places the task's compiled shim (`shared_object`) and the candidate's spec in a folder of the
/// spec's own inside the candidate's build folder, each written whole before it is renamed into
/// place, and returns the copy's path: each candidate's shim is a file of its own, which the
/// worker loads and which finds the spec beside it.
Result<std::filesystem::path> WriteKernelBenchCandidate(const std::filesystem::path& shared_object,
                                                        const std::string& spec_json,
                                                        const std::filesystem::path& build_directory);

/// The problem's own sizes ("batch_size=4096, dim=393216") where `shape` (a task's bench shape)
/// is not them (the importer halved them to fit the backend), else empty.
std::string ProblemSizesWhereReduced(const nlohmann::json& analysis, const DimValues& shape);

}  // namespace ksmith
