#include "eval/case_counter.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace ksmith {

bool CaseCounter::Record(const CaseRef& at, bool passed) {
  if (stopped_) return false;
  if (passed) {
    Count(at, false);
    return true;
  }
  if (recorder_.verdict().status != VerdictStatus::kWrongOutput) {
    // A breach of the contract decides over an earlier wrong output: a kernel that fails a case
    // on purpose must not probe the walls in the cases after it unseen.
    breach_after_wrong_ = first_.has_value() && recorder_.verdict().status == VerdictStatus::kIntegrityViolation;
    Stop();
    return false;
  }
  Count(at, true);
  if (first_) {
    Restore();  // this case's numbers replaced the first's
  } else {
    first_ = FirstFailure{stage_, recorder_.verdict().status, recorder_.verdict().reason};
  }
  return true;
}

bool CaseCounter::Finish(bool completed) {
  if (!completed) Stop();
  if (!first_) {
    // A first failure that was not a wrong output ended the stage. What passed before it still
    // says whether its case stands out (a crash on a tiny shape after larger ones passed).
    if (!completed) {
      tally_.planned = planned_;
      stage_.details.MutableCheck().tally = std::move(tally_);
    }
    return completed;
  }
  tally_.planned = planned_;
  if (breach_after_wrong_) {
    Verdict& verdict = recorder_.verdict();
    verdict.reason += fmt::format("; before it, wrong on {} of {} cases", tally_.failed, tally_.judged);
    stage_.details.summary = verdict.reason;
    stage_.details.MutableCheck().tally = std::move(tally_);
    return false;
  }
  Restore();
  std::string count = tally_.stopped.empty()
                          ? fmt::format("; wrong on {} of {} cases", tally_.failed, tally_.judged)
                          : fmt::format("; wrong on {} of the {} cases judged (of {}) before a later case ended "
                                        "the count: {}",
                                        tally_.failed, tally_.judged, tally_.planned,
                                        tally_.stopped.substr(0, tally_.stopped.find(':')));
  Verdict& verdict = recorder_.verdict();
  verdict.reason += count;
  stage_.details.summary = verdict.reason;
  stage_.details.MutableCheck().tally = std::move(tally_);
  return false;
}

void CaseCounter::Count(const CaseRef& at, bool failed) {
  auto group = std::find_if(tally_.groups.begin(), tally_.groups.end(), [&at](const CaseGroup& known) {
    return known.shape == at.shape && known.distribution == at.distribution;
  });
  if (group == tally_.groups.end()) {
    group = tally_.groups.insert(tally_.groups.end(), CaseGroup{at.shape, at.distribution, at.smallest_dim, 0, 0});
  }
  ++group->cases;
  ++tally_.judged;
  if (failed) {
    ++group->failed;
    ++tally_.failed;
  }
}

void CaseCounter::Stop() {
  if (stopped_) return;
  stopped_ = true;
  const Verdict& verdict = recorder_.verdict();
  // A stop that left the first wrong output as the verdict (an error path that recorded nothing)
  // still says that it stopped.
  tally_.stopped = first_ && verdict.reason == first_->reason
                       ? std::string(VerdictStatusName(verdict.status)) + ": a later case could not be judged"
                       : fmt::format("{}: {}", VerdictStatusName(verdict.status), verdict.reason);
}

void CaseCounter::Restore() {
  StageDetails details = first_->stage.details;
  details.check = stage_.details.check;
  details.counters = stage_.details.counters;
  stage_.details = std::move(details);
  stage_.outcome = first_->stage.outcome;
  recorder_.verdict().status = first_->status;
  recorder_.verdict().reason = first_->reason;
}

}  // namespace ksmith
