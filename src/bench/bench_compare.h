// `ksmith bench compare`: two benchmark results (bench.json as BenchJson() writes it) side by
// side, task by task and over the suite. A speedup counts as changed only when the two 95%
// intervals do not overlap: improved when B's low end is above A's high end, regressed when B's
// high end is below A's low end, within noise otherwise. Timings from different backends measure
// different things, so comparing them is refused unless asked for.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

/// One side of a comparison: a bench.json and where it was read from.
struct BenchRecord {
  std::string source;  // the file, as given (for messages)
  nlohmann::json bench;
};

/// Reads `path`, a bench.json or a report folder that holds one. kNotFound when there is no
/// such file, kParse when it is not JSON or not a bench result; the message names the file and
/// what is wrong with it.
Result<BenchRecord> LoadBenchRecord(const std::filesystem::path& path);

/// Checks that `bench` has what a comparison reads (settings.backend, tasks with names, a
/// summary); kParse naming `source` and the first thing missing.
Result<BenchRecord> MakeBenchRecord(std::string source, nlohmann::json bench);

/// One task's figures on one side, as the comparison reads them. Older bench.json files lack
/// some fields; those are derived where possible (pass@1 from pass_at_k) and unknown otherwise.
struct TaskSide {
  bool passing = false;  // ran, and at least one candidate was correct
  std::string error;     // why the task has no figures
  double pass_at_1 = 0;
  std::optional<double> best_speedup;
  std::optional<double> best_speedup_low;   // the best candidate's 95% interval
  std::optional<double> best_speedup_high;
  bool fast_1 = false;  // the interval clears 1
  double efficiency_at_1 = 0;
  int64_t candidates = 0;
  int64_t tokens = 0;
  double cost = 0;
  double wall_s = 0;
  int64_t timed_not_alone = 0;  // correct candidates timed beside other work: left out of the speedups

  static TaskSide FromJson(const nlohmann::json& task);
  nlohmann::json ToJson() const;
};

enum class Change {
  kAdded,         // only in B
  kRemoved,       // only in A
  kNewlyPassing,  // no correct candidate in A, one in B
  kNewlyFailing,  // the reverse
  kStillFailing,  // no correct candidate on either side
  kImproved,      // B's interval is wholly above A's
  kRegressed,     // B's interval is wholly below A's
  kWithinNoise,   // the intervals overlap
  kNoInterval,    // passing on both sides, but a speedup or its interval is missing
};

/// "added", "newly_passing", "within_noise", ... (the JSON's spelling; the table uses spaces).
const char* ChangeName(Change change);

/// Improved, regressed or within noise by the intervals [a_low, a_high] and [b_low, b_high].
Change IntervalChange(double a_low, double a_high, double b_low, double b_high);

/// The change of one task; at least one side is present.
Change ClassifyTask(const std::optional<TaskSide>& a, const std::optional<TaskSide>& b);

struct CompareOptions {
  bool allow_mixed_backends = false;
};

/// {"a": {source, settings}, "b": {...}, "tasks": [{name, a, b, speedup_ratio, change}] ordered
/// by name, "summary": {pass_at_1, fast_1, efficiency_at_1, wall_s, elapsed_s, tokens, cost (each
/// {a, b, delta}), geomean_speedup {a, a_ci95, b, b_ci95, ratio, change}, changes (a count per
/// change), same_tasks, notes}}. kInvalidArgument naming both backends when they differ and
/// `options` does not allow it.
Result<nlohmann::json> CompareBenches(const BenchRecord& a, const BenchRecord& b, const CompareOptions& options);

/// The comparison for people: which is A and which B, an aligned table with one row per task,
/// then a summary line and a line counting the changes.
std::string CompareText(const nlohmann::json& comparison);

}  // namespace ksmith
