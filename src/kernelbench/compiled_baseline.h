// torch.compile as an imported KernelBench task's second baseline, on the GPU: KernelBench
// reports a candidate's speed against torch eager and against torch.compile. Inductor compiles
// when the model is first called (a compiler process, caches written), which the verifying worker
// forbids, so a warm step first calls the problem's Model under torch.compile at the timing shape
// in the build sandbox (trusted code only: the problem and ksmith's; the candidate never touches
// these caches), and the worker's compiled baseline loads what it cached (ksmith_kb/compiled.py).
// The warm step is cached by content: once per task, torch and GPU.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "task/task.h"

namespace ksmith {

struct CompiledBaselinePlan {
  std::filesystem::path directory;  // <cache>/kernelbench-compiled/<digest>: inductor/, triton/, manifest.json
  // <directory>/problem.py: the problem's source, which dynamo reads while it traces (the user's
  // own file is not readable in either sandbox); one path for the warm step and the worker.
  std::filesystem::path problem_file;
  std::string digest;
};

struct CompiledBaselineWarm {
  bool warmed = false;     // false: see log (torch without torch.compile, a model inductor cannot compile)
  bool cache_hit = false;
  double seconds = 0;      // [s] 0 on a cache hit
  std::string log;
  nlohmann::json manifest;  // {programs: [...], warmed: [...], failures: [...], torch: "2.11.0"}
};

/// Where the warm step's caches go for this task at its timing shape.
CompiledBaselinePlan PlanCompiledBaseline(const std::filesystem::path& cache_directory, const nlohmann::json& analysis,
                                          const Task& view);

/// Runs the warm step in the build sandbox, or finds it in the cache. An Error only where python
/// could not be run at all.
Result<CompiledBaselineWarm> WarmCompiledBaseline(const CompiledBaselinePlan& plan, const nlohmann::json& analysis,
                                                  const Task& view);

/// The C++ of the compiled baseline (a shim like the task's baseline_cuda.cu, role
/// "cuda_compiled"), reading the caches in `plan`.
Result<std::string> RenderCompiledBaseline(const nlohmann::json& analysis, const CompiledBaselinePlan& plan,
                                           const nlohmann::json& manifest);

}  // namespace ksmith
