// `ksmith kernelbench run`: a folder of candidates named the way KernelBench's scripts name them
// (level_<L>_problem_<P>_sample_<S>_kernel.py), each judged on its imported task, with results
// written in KernelBench's eval_results.json format beside ksmith's verdicts, so that a pipeline
// built around KernelBench's evaluator can swap in ksmith's.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
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

/// Where times were taken, as KernelBench's timing records name it: `hardware` the GPU's name
/// ("NVIDIA H200") or the CPU's model, `device` "cuda:0" or "cpu".
struct KernelBenchHardware {
  std::string hardware;
  std::string device;
};

/// One entry of KernelBench's eval_results.json (scripts/eval_from_generations.py: sample_id,
/// compiled, correctness, metadata, runtime and runtime_stats in ms) plus ref_runtime and speedup,
/// from ksmith's verdict. correctness is true only for `passed`: a candidate that cheated the
/// timer or ran work the caller never waited for has no trustworthy output either. metadata
/// carries ksmith's status, reason, labels, comparison and the static findings' check names. Times are
/// means of ksmith's timing samples, as KernelBench's runtime is (its analysis divides its baseline
/// file's mean by it); -1 where the candidate was not timed. ksmith's speedup is its paired median.
/// runtime_stats holds KernelBench's fields (mean, std, min, max, num_trials, hardware, device) of
/// ksmith's timing samples (each a round's time of one call) beside the median and its interval.
nlohmann::json KernelBenchResultEntry(const Verdict& verdict, int sample, const KernelBenchHardware& where = {});

/// The problem's file name in KernelBench ("19_ReLU.py"), the key of KernelBench's baseline
/// timing files, from what `ksmith import kernelbench` wrote in the task's folder (kernelbench.json).
Result<std::string> KernelBenchProblemFile(const std::filesystem::path& task_directory);

/// KernelBench's baseline timing files (its results/timing/<hardware>/baseline_time_torch.json,
/// and baseline_time_torch_compile_inductor_default.json for torch.compile), which its analysis
/// script (scripts/benchmark_eval_analysis.py, `baseline_file=`) divides by eval_results.json's
/// runtime: {"level<L>": {<problem file>: {mean, std, min, max, num_trials, hardware, device}}},
/// in ms. ksmith times the baseline in every verdict, beside the candidate: a problem's entry
/// is its lowest-numbered timed sample's, so that the analysis, which reads sample 0, divides
/// sample 0's own baseline by its runtime. Only passed verdicts' baselines are kept; a problem none
/// of whose samples passed has KernelBench's "not timed" (-1), so that it still counts.
class KernelBenchBaselineTimes {
 public:
  void Add(int level, const std::string& problem_file, int sample, const Verdict& verdict,
           const KernelBenchHardware& where);
  nlohmann::json Eager() const;
  /// Empty when no verdict timed torch.compile (`--compiled-baseline`).
  nlohmann::json Compiled() const;

 private:
  struct Times {
    bool timed = false;
    int sample = 0;
    nlohmann::json eager;
    nlohmann::json compiled;
  };
  nlohmann::json Collect(nlohmann::json Times::*field) const;
  std::map<std::pair<int, std::string>, Times> by_problem_;
  bool any_compiled_ = false;  // some verdict timed torch.compile: its file is written, -1 where untimed
};

/// Adds `entry` under the problem's id, as KernelBench's add_to_eval_results_file does (a list
/// per problem id string), replacing an earlier entry of the same sample.
void AddKernelBenchResult(nlohmann::json& results, int problem, nlohmann::json entry);

}  // namespace ksmith
