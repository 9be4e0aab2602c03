#include "agent/run_report.h"

#include <map>

#include <fmt/format.h>

#include "agent/activity_clock.h"
#include "agent/elite_archive.h"
#include "agent/feedback.h"
#include "agent/hypothesis_ledger.h"
#include "agent/proposal_review.h"
#include "core/strings.h"
#include "eval/backend_registry.h"

namespace ksmith {
namespace {

// A table cell: one line, no pipes.
std::string Cell(const std::string& text, size_t max_chars = 90) {
  std::string cell = FirstLine(text, max_chars);
  for (char& c : cell) {
    if (c == '|') c = '/';
  }
  return cell;
}

std::string DescribeOutcome(const Attempt& attempt) {
  if (attempt.verdict) return SummarizeVerdict(*attempt.verdict);
  if (!attempt.extraction_error.empty()) return "no kernel: " + attempt.extraction_error;
  return attempt.status;
}

// The ideas a team tried and what each measured, and the plans and judgments in order.
std::string RenderLedger(const RunState& state) {
  const HypothesisLedger ledger = HypothesisLedger::FromRun(state);
  if (ledger.empty() && state.notes.empty()) return "";
  std::string text = "## Hypotheses\n\n";
  text += ledger.empty() ? "No idea was tried yet.\n" : ledger.Render();
  if (!state.notes.empty()) {
    text += "\nThe team's notes (plans and judgments, each after the candidates made before it):\n\n";
    for (const Note& note : state.notes) {
      const std::string when = note.after_attempts == 0 ? "before any candidate"
                                                        : fmt::format("after candidate {}", note.after_attempts);
      text += fmt::format("- {}, {}: {}\n", when, note.role, Cell(FirstLine(std::string(Trim(note.content)), 200), 200));
    }
  }
  return text + "\n";
}

// What the person did in an interactive run, in order.
std::string RenderInterventions(const RunState& state) {
  if (state.interventions.empty()) return "";
  std::string text = "## The person's decisions\n\nEach proposal was reviewed before it was judged (`--interactive`):\n\n";
  for (const Intervention& intervention : state.interventions) {
    const std::string when = intervention.after_attempts == 0 ? "before any candidate"
                                                              : fmt::format("after candidate {}", intervention.after_attempts);
    text += fmt::format("- {}: {}\n", when, Cell(DescribeIntervention(intervention), 200));
  }
  return text + "\n";
}

// The archive of a search's run (evolve), and what each of its operators made and kept.
std::string RenderArchive(const RunState& state) {
  if (!HasSearchPlacements(state)) return "";
  const EliteArchive archive = ArchiveOf(state);
  std::string text = fmt::format("## Archive\n\nThe fastest kernel of each kind found ({} cells; the features come from "
                                 "the build's machine code and the timing):\n\n"
                                 "| cell | candidate | speedup | features |\n|---|---|---|---|\n", archive.size());
  for (const Elite* elite : archive.Ranked()) {
    text += fmt::format("| `{}` | {} | {:.2f}x | {} |\n", elite->features.Cell(), elite->number, elite->speedup,
                        Cell(elite->features.Describe(), 120));
  }
  struct Tally {
    int made = 0, passed = 0, improved = 0;
  };
  std::map<std::string, Tally> by_operator;
  EliteArchive replay;
  for (size_t i = 0; i < state.attempts.size(); ++i) {
    const Attempt& attempt = state.attempts[i];
    const std::string op = attempt.search.is_object() ? attempt.search.value("operator", std::string("-")) : "-";
    Tally& tally = by_operator[op];
    ++tally.made;
    if (attempt.passed()) ++tally.passed;
    if (replay.Offer(attempt, i)) ++tally.improved;
  }
  text += "\n| operator | candidates | passed | new or better cell |\n|---|---|---|---|\n";
  for (const auto& [op, tally] : by_operator) {
    text += fmt::format("| {} | {} | {} | {} |\n", op, tally.made, tally.passed, tally.improved);
  }
  return text + "\n";
}

}  // namespace

std::string ShortOfBaseline(const Attempt& best) {
  if (!best.verdict || !best.verdict->timing) return "";
  const Timing& timing = *best.verdict->timing;
  if (timing.comparison == "faster") return "";
  if (timing.comparison == "slower") return fmt::format("slower than the baseline ({:.2f}x)", timing.speedup.median);
  return fmt::format("not measurably faster than the baseline ({:.2f}x, interval {:.2f}-{:.2f})", timing.speedup.median,
                     timing.speedup.low, timing.speedup.high);
}

std::string RetrySummary(const std::vector<LlmCallRecord>& calls) {
  size_t retried = 0;
  std::map<std::string, int> reasons;
  for (const auto& record : calls) {
    if (record.call.retry_reasons.empty()) continue;
    ++retried;
    for (const auto& reason : record.call.retry_reasons) ++reasons[reason];
  }
  if (retried == 0) return "";
  std::string text = fmt::format("{} of {} model calls were retried:", retried, calls.size());
  bool first = true;
  for (const auto& [reason, count] : reasons) {
    text += fmt::format("{} {} ({} time{})", first ? "" : ",", reason, count, count == 1 ? "" : "s");
    first = false;
  }
  return text;
}

std::string RenderRunReport(const RunRecord& run, const RunState& state, const std::string& best_path,
                            const std::vector<LlmCallRecord>& calls) {
  std::string report = fmt::format("# ksmith run {}\n\n", run.id);
  report += fmt::format("- task: `{}` on `{}`\n- strategy: {}\n", run.task, run.backend, run.strategy);
  if (!run.provider.empty()) report += fmt::format("- model: {} via {}\n", run.model.empty() ? "(default)" : run.model, run.provider);
  report += fmt::format("- started: {}, ended: {} ({})\n", run.created_at, run.finished_at.empty() ? "-" : run.finished_at,
                        run.status);
  report += fmt::format("- stopped because: {}\n", run.stop_reason.empty() ? "-" : run.stop_reason);
  report += fmt::format("- attempts: {}, evaluated: {}, passed: {}\n", state.attempts.size(), run.candidates, run.passed);
  report += fmt::format("- model calls: {}, tokens: {}, cost: ${:.4f}\n", run.llm_calls, run.tokens, run.cost_dollars);
  if (const std::string retries = RetrySummary(calls); !retries.empty()) report += "- " + retries + "\n";
  if (const Activity activity = Activity::FromJson(run.activity); activity.wall_s > 0) {
    report += "- " + activity.Describe() + "\n";
  }
  report += "\n";

  const Attempt* best = state.Best();
  const std::string short_of = best != nullptr ? ShortOfBaseline(*best) : "";
  report += short_of.empty() ? "## Best kernel\n\n" : "## Fastest correct kernel\n\n";
  if (best == nullptr) {
    report += "No candidate passed.\n\n";
  } else {
    if (!short_of.empty()) report += fmt::format("**Nothing beat the baseline.** The fastest correct kernel is {}.\n\n", short_of);
    report += fmt::format("Candidate {} ({}{}): {}.\n\n", best->number, best->origin,
                          best->knobs.empty() ? "" : ", " + best->knobs.dump(), SummarizeVerdict(*best->verdict));
    if (!best_path.empty()) report += fmt::format("Written to `{}`.\n\n", best_path);
    // The model's own account of the change, when it gave one.
    for (const auto& line : SplitLines(best->explanation)) {
      if (!Trim(line).empty()) report += "> " + line + "\n";
    }
    report += fmt::format("\n```{}\n{}\n```\n\n", TraitsOf(run.backend).fence_language, best->source);
    const Attempt* first = nullptr;  // the first correct, timed kernel of the run
    for (const auto& attempt : state.attempts) {
      if (attempt.passed() && attempt.speedup && first == nullptr) first = &attempt;
    }
    if (const auto reasons = first != nullptr ? WhyFaster(*first, *best) : std::vector<std::string>{}; !reasons.empty()) {
      report += fmt::format("### What differs from candidate {}, the first correct one ({})\n\n", first->number,
                            DescribeOutcome(*first));
      for (const auto& reason : reasons) report += "- " + reason + "\n";
      report += "\n";
    }
  }
  report += RenderArchive(state);
  report += RenderLedger(state);
  report += RenderInterventions(state);

  // Candidates by their number in the run, as the summary and `runs show` give them; the store's
  // ids run across every run in the store and stay internal.
  std::map<int64_t, int64_t> number_of;  // store id -> number in the run
  for (const Attempt& attempt : state.attempts) number_of[attempt.candidate_id] = attempt.number;
  const auto parent_cell = [&number_of](const Attempt& attempt) -> std::string {
    if (!attempt.parent_id) return "-";
    const auto found = number_of.find(*attempt.parent_id);
    return found != number_of.end() ? std::to_string(found->second) : "-";
  };
  const bool searched = HasSearchPlacements(state);
  report += searched ? "## Attempts\n\n| candidate | parent | origin | search | status | speedup | outcome |\n"
                       "|---|---|---|---|---|---|---|\n"
                     : "## Attempts\n\n| candidate | parent | origin | status | speedup | outcome |\n|---|---|---|---|---|---|\n";
  for (const Attempt& attempt : state.attempts) {
    report += fmt::format("| {} | {} | {} | {}{} | {} | {} |\n", attempt.number, parent_cell(attempt),
                          attempt.origin + (attempt.knobs.empty() ? "" : " " + Cell(attempt.knobs.dump(), 60)),
                          searched ? Cell(DescribePlacement(attempt.search)) + " | " : "", attempt.status,
                          attempt.speedup ? fmt::format("{:.2f}x", *attempt.speedup) : "-", Cell(DescribeOutcome(attempt)));
  }
  return report;
}

}  // namespace ksmith
