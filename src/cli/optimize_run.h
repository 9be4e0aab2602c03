// One `ksmith optimize` run, for the optimize command and for each task of a bench.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/eval_client.h"

namespace ksmith {

inline constexpr int kExitInterrupted = 130;

struct OptimizeFlags {
  std::optional<std::string> task, backend, provider, base_url, model, strategy, kernel, arch, format;
  std::optional<int64_t> max_candidates, budget_tokens;
  std::optional<int> parallel, seeds, islands, profile_every;
  std::optional<double> temperature, budget_dollars, budget_wall_s, timing_budget_s, build_memory_gib, build_cpu_s;
  std::string replay_run, resume, db, output_dir, config;
  std::vector<std::string> devices;  // GPU backends: the devices to evaluate on; empty: the first
  bool json = false, quiet = false, cache = false;
  bool no_overlap = false;
  bool no_knowledge = false;
  /// A person reviews each proposal at the terminal before it is judged (cli/terminal_review.h).
  bool interactive = false;
};

struct OptimizeEnvironment {
  /// The evaluation service to submit candidates to; null: the run starts its own on this machine.
  EvalClient* client = nullptr;
  /// Ctrl-C and SIGTERM stop the run between steps (a bench handles them once for all its runs).
  bool handle_signals = true;
};

struct OptimizeOutcome {
  int exit_code = 0;
  std::string error;       // why the run could not start or failed; empty otherwise
  nlohmann::json summary;  // the run's summary (as `--json` prints it); null when it did not run
  std::string rendered;    // the same for a person
};

/// Runs one optimize. Never prints its outcome (progress lines go to stderr unless quiet).
OptimizeOutcome RunOptimize(const OptimizeFlags& flags, const OptimizeEnvironment& environment);

/// What RunOptimize checks before a run starts (the store, ksmith.toml and the settings, the task,
/// its format and starting kernel, the strategy, the provider and its key, the output folder),
/// without starting it or spending anything: a bench checks every task so before it runs any.
/// `environment.client` must be set (no service is started here). exit_code 0 when the run could
/// start; otherwise the error RunOptimize would have given.
OptimizeOutcome CheckOptimize(const OptimizeFlags& flags, const OptimizeEnvironment& environment);

}  // namespace ksmith
