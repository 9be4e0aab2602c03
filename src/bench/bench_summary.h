// `ksmith bench`'s figures: per task from the candidates of its optimize run, and over the suite.
// Works from verdict JSON as the store keeps it, so a summary can be recomputed from any store.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/metrics.h"

namespace ksmith {

/// One evaluated candidate's verdict (as `ksmith eval --json` prints it) as a metrics sample.
/// compiled: the build stage ran and did not fail; correct: status passed.
SampleOutcome SampleFromVerdict(const nlohmann::json& verdict);

struct BenchTaskResult {
  std::string task;
  std::string run_id;         // the optimize run in the store; empty when it could not run
  std::string error;          // why the task has no figures
  std::vector<SampleOutcome> samples;
  int64_t tokens = 0;
  double cost_dollars = 0;
  double device_s = 0;        // [s] the evaluator's time over the task's candidates
  double wall_s = 0;          // [s] the task's run, end to end
  std::string strategy;       // the strategy the run used ("tune", "refine")
  std::string best_kernel;    // the fastest correct kernel's file, relative to the report's folder
  nlohmann::json best_knobs = nlohmann::json::object();
  std::string best_explanation;  // the model's words, first line
};

/// A task's best speedup with its 95% interval, "2.00x [1.80, 2.20]"; "-" without one.
std::string SpeedupWithInterval(const nlohmann::json& task);

struct BenchSettings {
  std::string suite;
  std::string backend;
  std::string strategy;
  int64_t samples = 0;
  int jobs = 1;  // tasks run at once
  /// Where it ran: {"cpu", "cores", "memory_bandwidth_gbs", "fp32_gflops", "gpu"}, each when
  /// known; empty when unknown.
  nlohmann::json machine = nlohmann::json::object();
  /// The tasks' timings took turns on the device (one evaluation service for the bench), so
  /// running tasks at once did not make them noisier. False in files written before.
  bool timing_exclusive = false;
};

/// Fractions p of fast_p reported, as the issue asks.
inline const std::vector<double> kFastThresholds = {0, 0.5, 0.8, 1, 1.5, 2};

/// {"settings": {suite, backend, strategy, samples, jobs, machine, ksmith_version}, "tasks": [per
/// task: run_id, samples, compile_rate, correct_rate, pass_at_1, pass_at_k, speedup_at_k,
/// efficiency_at_1, efficiency_at_k, best_speedup with best_speedup_ci95 [low, high] (and
/// best_speedup_low, as before), fast_1, tokens, cost, device_s, wall_s, error], "summary":
/// {pass_at_1, pass_at_k, fast_p, fast_1, geomean_speedup (+ interval, tasks), efficiency_at_1,
/// compile_rate, correct_rate, candidates, tokens, cost, device_s, wall_s (the tasks' times
/// added up), elapsed_s (the bench's own wall time; only when `elapsed_s` > 0)}}.
nlohmann::json BenchJson(const BenchSettings& settings, const std::vector<BenchTaskResult>& results,
                         double elapsed_s = 0);

/// "AMD EPYC 9654 96-Core Processor, 16 cores, NVIDIA H200" from settings.machine; "" when unknown.
std::string DescribeMachine(const nlohmann::json& machine);

/// The same as a Markdown report.
std::string BenchMarkdown(const nlohmann::json& bench);

}  // namespace ksmith
