// How an optimize run spends its time: seconds with at least one evaluation in flight, with at
// least one model call in flight, and with both at once. In published agent loops the evaluation
// device sat idle most of the time while models wrote (4-18% busy); these numbers say how well a
// run overlaps the two. Thread-safe: evaluations and model calls end on their own threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace ksmith {

struct Activity {
  double wall_s = 0;
  double evaluating_s = 0;   // at least one evaluation queued or running
  double proposing_s = 0;    // at least one model call in flight
  double overlapped_s = 0;   // both at once
  int64_t proposals = 0;     // model calls made
  int64_t proposals_while_evaluating = 0;  // ...of which started while an evaluation was in flight

  /// evaluating_s over wall_s; 0 for a run that took no time.
  double evaluating_fraction() const { return wall_s > 0 ? evaluating_s / wall_s : 0; }

  Activity& operator+=(const Activity& other);
  nlohmann::json ToJson() const;
  /// Missing or malformed fields read as zero: an activity is a report, never a reason to fail.
  static Activity FromJson(const nlohmann::json& json);
  /// "evaluations in flight 87% of 2m10s (model calls 60%, both at once 48%)".
  std::string Describe() const;
};

class ActivityClock {
 public:
  using Clock = std::chrono::steady_clock;
  ActivityClock() : started_(Clock::now()), changed_(started_) {}

  void EvaluationStarted() { Change(+1, 0, false); }
  void EvaluationEnded() { Change(-1, 0, false); }
  void ProposalStarted() { Change(0, +1, true); }
  void ProposalEnded() { Change(0, -1, false); }

  /// The activity since construction, up to now.
  Activity Snapshot() const;

 private:
  void Change(int evaluations, int proposals, bool new_proposal);
  void AccumulateLocked(Clock::time_point now, Activity& activity) const;

  mutable std::mutex mutex_;
  Clock::time_point started_;
  Clock::time_point changed_;  // when the counts last changed
  int evaluations_ = 0;
  int proposals_ = 0;
  Activity activity_;  // up to changed_
};

}  // namespace ksmith
