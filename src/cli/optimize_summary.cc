#include "cli/optimize_summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "agent/activity_clock.h"
#include "agent/feedback.h"
#include "agent/run_report.h"
#include "core/files.h"
#include "core/strings.h"
#include "eval/backend_registry.h"
#include "formats/format_registry.h"

namespace ksmith {

Result<RunOutputs> WriteRunOutputs(const std::filesystem::path& directory, const RunRecord& run, const RunState& state,
                                   const std::vector<LlmCallRecord>& calls) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return MakeError(ErrorKind::kIo, "cannot create the output folder {}: {}", directory.string(), error.message());
  RunOutputs outputs;
  if (const Attempt* best = state.Best()) {
    // The format's own file (a ModelNew is Python), else the backend's source; a run stored before
    // the setting existed wrote ksmith's contract.
    const auto format = FormatRegistry::Global().Find(run.config.value("format", std::string("native")));
    std::string extension = format.ok() ? (*format)->format().FileExtension() : std::string();
    if (extension.empty()) extension = TraitsOf(run.backend).source_extension;
    outputs.best_kernel = directory / ("best" + extension);
    if (auto status = WriteFileAtomic(outputs.best_kernel, best->source); !status.ok()) return status.error();
  }
  outputs.report = directory / "report.md";
  if (auto status = WriteFileAtomic(outputs.report, RenderRunReport(run, state, outputs.best_kernel.string(), calls));
      !status.ok()) {
    return status.error();
  }
  return outputs;
}

nlohmann::json RunSummaryJson(const RunRecord& run, const RunState& state, const RunOutputs& outputs,
                              const std::filesystem::path& db_path) {
  nlohmann::json summary = {{"run_id", run.id},
                            {"task", run.task},
                            {"backend", run.backend},
                            {"strategy", run.strategy},
                            {"provider", run.provider},
                            {"model", run.model},
                            {"status", run.status},
                            {"stop_reason", run.stop_reason},
                            {"candidates", run.candidates},
                            {"attempts", state.attempts.size()},
                            {"passed", run.passed},
                            {"llm_calls", run.llm_calls},
                            {"tokens", run.tokens},
                            {"cost", run.cost_dollars},
                            {"activity", run.activity},
                            {"report", outputs.report.string()},
                            {"db", db_path.string()}};
  summary["best"] = nullptr;
  if (const Attempt* best = state.Best(); best != nullptr && best->verdict) {
    nlohmann::json verdict = best->verdict->ToJson();
    verdict["source"] = outputs.best_kernel.string();
    verdict["candidate_id"] = best->candidate_id;
    verdict["candidate"] = best->number;
    verdict["origin"] = best->origin;
    verdict["knobs"] = best->knobs;
    verdict["explanation"] = best->explanation;
    summary["best"] = std::move(verdict);
    summary["beat_baseline"] = best->verdict->timing.has_value() && ShortOfBaseline(*best).empty();
  }
  return summary;
}

std::string RenderRunSummary(const RunRecord& run, const RunState& state, const RunOutputs& outputs) {
  std::string text = fmt::format("run {}: {} ({})\n", run.id, run.status, run.stop_reason);
  const size_t no_kernel = state.attempts.size() - std::min<size_t>(state.attempts.size(), run.candidates);
  text += fmt::format("  {} candidates made: {} evaluated{}, {} passed; {} model calls, {} tokens, ${:.4f}\n",
                      state.attempts.size(), run.candidates,
                      no_kernel > 0 ? fmt::format(", {} without a kernel", no_kernel) : "", run.passed, run.llm_calls,
                      run.tokens, run.cost_dollars);
  if (const Activity activity = Activity::FromJson(run.activity); activity.wall_s > 0) {
    text += "  " + activity.Describe() + "\n";
  }
  if (const Attempt* best = state.Best(); best != nullptr && best->verdict) {
    const std::string short_of = ShortOfBaseline(*best);
    if (!short_of.empty()) text += fmt::format("  nothing beat the baseline: the fastest correct kernel is {}\n", short_of);
    text += fmt::format("  {}: candidate {} ({}{}): {}\n", short_of.empty() ? "best" : "fastest correct", best->number,
                        best->origin,
                        best->knobs.empty() ? "" : " " + best->knobs.dump(), SummarizeVerdict(*best->verdict));
    text += fmt::format("  kernel: {}\n", outputs.best_kernel.string());
    if (!best->explanation.empty()) {
      text += fmt::format("  the model says: {}\n", FirstLine(best->explanation, 300));
    }
  } else {
    text += "  no candidate passed\n";
  }
  text += fmt::format("  report: {}\n  details: ksmith runs show {}\n", outputs.report.string(), run.id);
  return text;
}

}  // namespace ksmith
