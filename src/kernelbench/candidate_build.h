// The build sandbox of a KernelBench-format candidate. Its compiled extensions (load_inline,
// load) and Triton's JIT need to run compilers, which the verifying worker may not (seccomp: no
// fork, no exec). So the candidate is first imported by a python3 of its own, in a new network
// namespace, whose leftover processes die with it, under Landlock (it may read the system and
// torch, run the system's programs, and write only its build folder), which builds ModelNew at the task's public sizes and calls it once;
// the worker then loads what that built (ksmith_kb/extensions.py). The build is cached by content: a
// repeated candidate costs nothing.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "compile/build.h"
#include "core/result.h"
#include "task/task.h"

namespace ksmith {

/// Where a candidate's build goes, known before it runs (the worker is told to read there).
struct CandidateBuildPlan {
  std::filesystem::path directory;  // <cache>/kernelbench-builds/<digest>: manifest.json and what it names
  std::string digest;
};

struct CandidateBuild {
  bool built = false;  // false: the candidate does not import or its extension does not compile (see log)
  bool cache_hit = false;
  double seconds = 0;        // [s] 0 on a cache hit
  uint64_t peak_memory_bytes = 0;  // [bytes] python and its compilers together at most (0 on a cache hit)
  std::string log;           // what python and the compilers said
  std::string command;       // for provenance
  bool sandboxed = false;    // Landlock held it (the namespaces are in manifest["isolation"])
  nlohmann::json manifest;   // {extensions: [...], warnings: [...], isolation: {...}}
  std::optional<BuildLimitHit> limit_hit;  // what stopped a build that failed, when a limit did
};

/// The task's analysis (its folder's kernelbench.json); fails, saying why, for a task not imported
/// from KernelBench.
Result<nlohmann::json> LoadKernelBenchAnalysis(const Task& task);

/// The sizes the build sandbox builds and calls ModelNew at: the task's dev shapes and its timing
/// shape; on the GPU its hidden eval shapes too. Triton compiles a kernel for each specialisation
/// (a size's divisibility by 16, a block size derived from it), which the verifying worker cannot
/// (it runs no ptxas). Those shapes only inform "generalizes", never the verdict, and an imported
/// task's shapes follow from its public problem; the seeds stay secret.
std::vector<DimValues> BuildShapes(const Task& view, bool cuda);

CandidateBuildPlan PlanCandidateBuild(const std::filesystem::path& cache_directory, const nlohmann::json& analysis,
                                      const Task& view, std::string_view python_source, bool cuda);

/// Runs the build sandbox (or finds its result in the cache). An Error only where python could
/// not be run at all; a candidate that does not build is `built == false` with the log. Each of
/// its processes (python, ninja, each compiler) is held to `limits`.
Result<CandidateBuild> BuildCandidate(const CandidateBuildPlan& plan, const nlohmann::json& analysis, const Task& view,
                                      std::string_view python_source, std::string_view candidate_name, bool cuda,
                                      const BuildLimits& limits = {});

}  // namespace ksmith
