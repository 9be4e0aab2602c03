// `ksmith kernelbench run`: a folder of candidates named the way KernelBench's scripts name them
// (level_<L>_problem_<P>_sample_<S>_kernel.py), each judged on its imported task, with results
// written in KernelBench's eval_results.json format beside ksmith's verdicts, so that a pipeline
// built around KernelBench's evaluator can swap in ksmith's.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "eval/verdict.h"

namespace ksmith {

struct KernelBenchSample {
  int level = 0;
  int problem = 0;
  int sample = 0;
  std::filesystem::path path;
};

struct KernelBenchFolder {
  std::vector<KernelBenchSample> samples;  // by level, problem, sample
  std::vector<std::string> ignored;        // .py files whose names do not follow the pattern
};

/// The samples in `folder` (not recursive). Fails when the folder is missing or holds none.
Result<KernelBenchFolder> FindKernelBenchSamples(const std::filesystem::path& folder);

/// The prefix of the task a problem imports as: "kb_l1_019_".
std::string KernelBenchTaskPrefix(int level, int problem);

/// One entry of KernelBench's eval_results.json (scripts/eval_from_generations.py: sample_id,
/// compiled, correctness, metadata, runtime and runtime_stats in ms) plus ref_runtime and speedup,
/// from ksmith's verdict. correctness is true only for `passed`: a candidate that cheated the
/// timer or ran work the caller never waited for has no trustworthy output either. metadata
/// carries ksmith's status, reason, labels, comparison and the static findings' check names. Times are
/// medians (KernelBench's are means of 100 calls); -1 where the candidate was not timed.
nlohmann::json KernelBenchResultEntry(const Verdict& verdict, int sample);

/// Adds `entry` under the problem's id, as KernelBench's add_to_eval_results_file does (a list
/// per problem id string), replacing an earlier entry of the same sample.
void AddKernelBenchResult(nlohmann::json& results, int problem, nlohmann::json entry);

}  // namespace ksmith
