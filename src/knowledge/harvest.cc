#include "knowledge/harvest.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "agent/elite_archive.h"
#include "agent/evolve_prompts.h"
#include "agent/kernel_features.h"
#include "core/strings.h"

namespace ksmith {
namespace {

constexpr size_t kSourceChars = 4000;
constexpr size_t kWordsChars = 600;
constexpr size_t kFailureKinds = 3;

std::string Bounded(const std::string& text, size_t chars) {
  return text.size() <= chars ? text : text.substr(0, chars) + " [...]";
}

std::string FirstLines(const std::string& text, size_t lines) {
  std::string out;
  size_t taken = 0;
  for (const auto& line : SplitLines(text)) {
    if (taken++ == lines) break;
    out += line + "\n";
  }
  return std::string(Trim(out));
}

KnowledgeNote Base(const RunRecord& run, const Attempt& attempt, const std::string& category, const std::string& hardware) {
  KnowledgeNote note;
  note.kind = "experience";
  note.origin = fmt::format("run:{}#{}", run.id, attempt.number);
  note.tags = fmt::format("{} {} {} {}", category, run.task, run.backend, run.strategy);
  note.hardware = hardware;
  return note;
}

}  // namespace

std::vector<KnowledgeNote> HarvestRun(const RunRecord& run, const RunState& state, const std::string& category,
                                      const std::string& hardware) {
  std::vector<KnowledgeNote> notes;
  const Attempt* best = state.Best();
  if (best != nullptr && best->verdict && best->verdict->timing) {
    KnowledgeNote note = Base(run, *best, category, hardware);
    // One "best of the run" note per run: a resumed run that finds a better kernel replaces it.
    note.origin = fmt::format("run:{}#best", run.id);
    const KernelFeatures features = FeaturesOf(*best->verdict);
    note.title = fmt::format("{} on {}: {:.2f}x, the best of run {} (candidate {})", run.task, run.backend,
                             best->speedup.value_or(0), run.id, best->number);
    note.tags += " " + best->verdict->timing->bound_by + "-bound winning kernel " + features.Cell();
    note.body = "Measured: " + MeasuredLine({best->number, best->source, &*best->verdict}) + "\n";
    if (!best->explanation.empty()) note.body += "Its author said: " + Bounded(best->explanation, kWordsChars) + "\n";
    const auto first = std::find_if(state.attempts.begin(), state.attempts.end(), [](const Attempt& a) { return a.passed(); });
    if (first != state.attempts.end()) {
      const auto reasons = WhyFaster(*first, *best);
      if (!reasons.empty()) {
        note.body += fmt::format("What differs from candidate {}, the run's first correct kernel:\n", first->number);
        for (const auto& reason : reasons) note.body += "- " + reason + "\n";
      }
    }
    note.body += "The kernel:\n```\n" + Bounded(best->source, kSourceChars) + "\n```";
    notes.push_back(std::move(note));
  }
  // The first failure of each kind, and the kernel that fixed it when one did (a passing child).
  std::map<std::string, const Attempt*> failures;
  for (const auto& attempt : state.attempts) {
    if (attempt.verdict && !attempt.passed() && !attempt.pending() && !attempt.repeat_of &&
        failures.size() < kFailureKinds && !failures.contains(attempt.status)) {
      failures[attempt.status] = &attempt;
    }
  }
  for (const auto& [status, failed] : failures) {
    KnowledgeNote note = Base(run, *failed, category, hardware);
    const Attempt* fix = nullptr;
    for (const auto& attempt : state.attempts) {
      if (attempt.passed() && attempt.parent_id == failed->candidate_id) fix = &attempt;
    }
    note.title = fmt::format("{} on {}: {}{} (run {}, candidate {})", run.task, run.backend, status,
                             fix != nullptr ? " and its fix" : "", run.id, failed->number);
    note.tags += " " + status + " failure error";
    note.body = "The verdict: " + FirstLines(failed->verdict->reason, 8) + "\n";
    if (!failed->explanation.empty()) note.body += "The kernel's author had said: " + Bounded(failed->explanation, kWordsChars) + "\n";
    if (fix != nullptr) {
      note.body += fmt::format("Fixed by candidate {}{}", fix->number,
                               fix->explanation.empty() ? "." : ": " + Bounded(fix->explanation, kWordsChars));
    }
    notes.push_back(std::move(note));
  }
  return notes;
}

Result<size_t> HarvestInto(KnowledgeStore& store, const RunRecord& run, const RunState& state,
                           const std::string& category, const std::string& hardware) {
  size_t changed = 0;
  for (const auto& note : HarvestRun(run, state, category, hardware)) {
    auto put = store.Put(note);
    if (!put.ok()) return put.error();
    if (*put) ++changed;
  }
  return changed;
}

}  // namespace ksmith
