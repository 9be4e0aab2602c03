// The reward a trainer gets for one verdict. The default follows Dr.Kernel's published rule
// (research/anchors_2026-11-28.md): 0 for a failure or a candidate that runs no custom kernel;
// otherwise 0.5 for being correct, plus 0.5 * min(speedup, 3), plus 0.5 * the share of the
// candidate's GPU time spent in its own kernels. An integrity violation (a caught hack) is worse
// than any failure: -1 by default, so that a policy never learns that cheating breaks even.
// Every number is configurable in ksmith.toml's [reward] table (docs/serve.md).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

struct RewardRule {
  double correct = 0.5;           // added for a passed verdict
  double speedup_weight = 0.5;    // times min(speedup, speedup_cap); a verdict without timing adds 0
  double speedup_cap = 3.0;
  double coverage_weight = 0.5;   // times the share of GPU time in the candidate's own kernels
  double failure = 0.0;           // compile_error, runtime_error, timeout, wrong_output
  double no_custom_kernel = 0.0;  // passed, but none of its calls ran code of its own (torch only)
  double integrity_violation = -1.0;
  double infra_error = 0.0;       // the evaluator's fault: says nothing of the candidate

  /// The rule with [reward]'s keys of `path` over the defaults; an unknown key or a value that is
  /// not a finite number is an error that names it. A file without [reward] gives the defaults.
  static Result<RewardRule> FromConfigFile(const std::filesystem::path& path);
  nlohmann::json ToJson() const;
};

struct Reward {
  double value = 0;
  /// How it was reached: {"rule": "passed", "correct": 0.5, "speedup": ..., "coverage": ...,
  /// "coverage_source": "cupti" | "own code by contract" (native) | "unmeasured" (a ModelNew
  /// without CUPTI's attribution: coverage 0)}.
  nlohmann::json parts = nlohmann::json::object();
};

/// Whether a verdict's JSON has a label starting with `prefix` ("no custom kernel").
bool HasLabelStartingWith(const nlohmann::json& verdict, const std::string& prefix);

/// The reward of one verdict (its JSON, as `ksmith eval --json` prints it).
Reward ComputeReward(const RewardRule& rule, const nlohmann::json& verdict);

}  // namespace ksmith
