#include "kernelbench/candidate.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "kernelbench/shim.h"

namespace ksmith {

namespace {
constexpr size_t kMaxAnalysisBytes = size_t{64} << 20;
}  // namespace

Result<std::string> RenderKernelBenchCandidate(const Task& task, std::string_view python_source,
                                               std::string_view candidate_name, bool cuda) {
  const auto analysis_path = task.directory / "kernelbench.json";
  if (task.category != "kernelbench") {
    return MakeError(ErrorKind::kInvalidArgument,
                     "a KernelBench-format candidate (a .py file defining ModelNew) needs a task imported from "
                     "KernelBench (`ksmith import kernelbench`); {} is a {} task: write its candidate in C++",
                     task.name, task.category);
  }
  auto text = ReadFile(analysis_path, kMaxAnalysisBytes);
  if (!text.ok()) return text.error();
  const auto analysis = nlohmann::json::parse(*text, nullptr, false);
  if (analysis.is_discarded() || !analysis.is_object()) {
    return MakeError(ErrorKind::kParse, "{} is not JSON; re-import the problem", analysis_path.string());
  }
  auto shim = KernelBenchShimSpec(analysis, cuda ? "cuda_candidate" : "candidate");
  if (!shim.ok()) return shim.error();
  auto spec = nlohmann::json::parse(shim->spec_json);
  spec["candidate_source"] = std::string(python_source);
  spec["candidate_file"] = std::string(candidate_name);
  shim->spec_json = spec.dump();
  return RenderShim(*shim);
}

}  // namespace ksmith
