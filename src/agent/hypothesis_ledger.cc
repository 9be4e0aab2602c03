#include "agent/hypothesis_ledger.h"

#include <fmt/format.h>

namespace ksmith {
namespace {

void Judge(Hypothesis& entry, const LedgerRules& rules) {
  if (entry.rounds_without_gain >= rules.stall_rounds) {
    entry.status = "set aside";
    entry.why = fmt::format("{} passing kernels in a row without beating its best ({:.2f}x)", entry.rounds_without_gain,
                            entry.best_speedup.value_or(0));
  } else if (entry.best_speedup && entry.failures_in_row >= 2 * rules.failures_to_break) {
    // Built on from its best, and broken again as often: the idea is spent.
    entry.status = "set aside";
    entry.why = fmt::format("its last {} kernels failed, also when built on its best (candidate {}, {:.2f}x)",
                            entry.failures_in_row, entry.best_candidate, *entry.best_speedup);
  } else if (entry.failures_in_row >= rules.failures_to_break) {
    entry.status = entry.best_speedup ? "kept" : "broken";
    entry.why = entry.best_speedup
                    ? fmt::format("its last {} kernels failed; its best (candidate {}, {:.2f}x) stands and is built on",
                                  entry.failures_in_row, entry.best_candidate, *entry.best_speedup)
                    : fmt::format("its {} kernels failed, a kernel and its repairs", entry.failures_in_row);
  } else {
    entry.status = "trying";
    entry.why.clear();
  }
}

}  // namespace

std::string HypothesisOf(const Attempt& attempt) {
  if (!attempt.search.is_object()) return "";
  const auto found = attempt.search.find("hypothesis");
  return found != attempt.search.end() && found->is_string() ? found->get<std::string>() : "";
}

HypothesisLedger HypothesisLedger::FromRun(const RunState& state, LedgerRules rules) {
  HypothesisLedger ledger;
  for (size_t i = 0; i < state.attempts.size(); ++i) {
    const Attempt& attempt = state.attempts[i];
    const std::string name = HypothesisOf(attempt);
    if (name.empty() || attempt.pending()) continue;
    Hypothesis* entry = nullptr;
    for (auto& existing : ledger.entries_) {
      if (existing.name == name) entry = &existing;
    }
    if (entry == nullptr) entry = &ledger.entries_.emplace_back(Hypothesis{name});
    entry->kernels.push_back(attempt.number);
    if (attempt.passed()) {
      entry->failures_in_row = 0;
      const double speedup = attempt.speedup.value_or(0);
      if (!entry->best_speedup || speedup > *entry->best_speedup * rules.gain_ratio) {
        entry->best_speedup = speedup;
        entry->best_candidate = attempt.number;
        entry->best_attempt = i;
        entry->rounds_without_gain = 0;
      } else {
        ++entry->rounds_without_gain;
      }
    } else {
      ++entry->failures_in_row;
    }
    Judge(*entry, rules);
  }
  return ledger;
}

const Hypothesis* HypothesisLedger::Find(const std::string& name) const {
  for (const auto& entry : entries_) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

nlohmann::json HypothesisLedger::ToJson() const {
  nlohmann::json json = nlohmann::json::array();
  for (const auto& entry : entries_) {
    json.push_back({{"hypothesis", entry.name},
                    {"status", entry.status},
                    {"why", entry.why},
                    {"kernels", entry.kernels},
                    {"best_speedup", entry.best_speedup ? nlohmann::json(*entry.best_speedup) : nlohmann::json()},
                    {"best_candidate", entry.best_speedup ? nlohmann::json(entry.best_candidate) : nlohmann::json()}});
  }
  return json;
}

std::string HypothesisLedger::Render() const {
  std::string text;
  for (const auto& entry : entries_) {
    std::string kernels;
    for (int64_t number : entry.kernels) kernels += (kernels.empty() ? "" : ", ") + std::to_string(number);
    text += fmt::format("- \"{}\": {} kernel{} ({}), ", entry.name, entry.kernels.size(), entry.kernels.size() == 1 ? "" : "s",
                        kernels);
    text += entry.best_speedup ? fmt::format("best {:.2f}x (candidate {})", *entry.best_speedup, entry.best_candidate)
                               : std::string("none passed");
    text += fmt::format("; {}{}\n", entry.status, entry.why.empty() ? "" : ": " + entry.why);
  }
  return text;
}

}  // namespace ksmith
