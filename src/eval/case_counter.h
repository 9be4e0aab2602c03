// A correctness stage that goes on after a wrong output, to count how widely the kernel fails.
//
// Stopping at the first wrong case left feedback one case to go on: a kernel wrong on every case
// was told "it fails on a tiny shape" because the first case was tiny. So once a case's output is
// wrong, the session judges the rest of its cases too, and the counter tallies them by shape and
// distribution (CaseTally, eval/stage_details.h). A wrong kernel then costs what a correct one
// does. The verdict stays the first failure's, as before: the first wrong case, its numbers and
// its reason (with the count added). A later case that fails otherwise (a crash, a hang, a breach
// of the contract, a cancellation) ends the count, and the tally says what stopped it; a breach
// (integrity_violation) then is the verdict, so that a kernel cannot fail a case on purpose and
// probe the walls in the cases after it unseen. A first
// failure of that kind ends the stage at once, as it always did; its tally then holds the cases
// that passed before it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "eval/stage_details.h"
#include "eval/verdict.h"

namespace ksmith {

/// Counts the cases of one correctness stage. Not thread-safe: the session's own thread calls it,
/// in the order the cases are judged.
class CaseCounter {
 public:
  /// `stage` is the correctness stage, `planned` its number of cases.
  CaseCounter(VerdictRecorder& recorder, StageRecord& stage, size_t planned)
      : recorder_(recorder), stage_(stage), planned_(static_cast<int64_t>(planned)) {}

  /// The case at `at` was judged: `passed`, or failed with its failure recorded in the verdict.
  /// Returns whether to judge the next case: yes after a pass or a wrong output; no after any
  /// other failure, or once the count has stopped.
  bool Record(const CaseRef& at, bool passed);

  /// Ends the stage's count. `completed`: every case was passed to Record (false: the stage broke
  /// off for a failure Record did not see, such as a worker that died running a case). Where a
  /// case gave a wrong output, the first one is put back as the verdict, with the count in its
  /// reason and the tally in the stage's check facts. Where another failure ended the stage
  /// first, the tally holds the cases that passed before it, and the verdict is left as it is.
  /// Returns whether every case passed.
  bool Finish(bool completed);

 private:
  struct FirstFailure {
    StageRecord stage;
    VerdictStatus status;
    std::string reason;
  };

  void Count(const CaseRef& at, bool failed);
  /// Notes the verdict's current failure as what stopped the count.
  void Stop();
  /// The first wrong output back as the stage's and the verdict's failure; the check facts and
  /// counters gathered since are kept.
  void Restore();

  VerdictRecorder& recorder_;
  StageRecord& stage_;
  int64_t planned_;
  CaseTally tally_;
  std::optional<FirstFailure> first_;
  bool stopped_ = false;
  bool breach_after_wrong_ = false;  // an integrity violation ended the count: it is the verdict
};

}  // namespace ksmith
