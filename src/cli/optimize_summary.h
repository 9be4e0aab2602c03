// What `ksmith optimize` leaves behind and prints: the best kernel and a Markdown report in the
// output folder, and a summary (human or one JSON object).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/optimize_loop.h"
#include "core/result.h"
#include "store/run_store.h"

namespace ksmith {

struct RunOutputs {
  std::filesystem::path best_kernel;  // empty when nothing passed
  std::filesystem::path report;
};

/// Writes best.cc / best.cu and report.md into `directory` (created if missing).
Result<RunOutputs> WriteRunOutputs(const std::filesystem::path& directory, const RunRecord& run, const RunState& state,
                                   const std::vector<LlmCallRecord>& calls = {});

/// The summary object: run_id, status, stop_reason, candidates (evaluated), attempts, passed,
/// best (its verdict as `ksmith eval --json` prints it, plus source, candidate_id, explanation),
/// tokens, cost, report, db.
nlohmann::json RunSummaryJson(const RunRecord& run, const RunState& state, const RunOutputs& outputs,
                              const std::filesystem::path& db_path);

/// The same for a person: a few lines.
std::string RenderRunSummary(const RunRecord& run, const RunState& state, const RunOutputs& outputs);

}  // namespace ksmith
