// A verdict's correctness cases, made ready ahead of the candidate: inputs generated, the
// reference's answers and the inputs' RMS computed on a thread of their own. Neither depends on the candidate, so
// the work starts while the candidate still compiles and stays ahead of the calls that judge it.
// What is held ahead is bounded in bytes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "eval/cases.h"

namespace ksmith {

/// The bytes a prepared case holds: its inputs, its expected outputs and magnitudes.
size_t PreparedBytes(const PreparedCase& prepared);

class CaseFeed {
 public:
  /// Generates a case's inputs.
  using Prepare = std::function<PreparedCase(const CaseSpec&)>;
  /// Fills prepared.expected (and .magnitude). An error is the evaluator's, never the
  /// candidate's; the feed stops at the first.
  using Answer = std::function<Status(PreparedCase&)>;
  /// Runs once on the feed's thread before the first case (e.g. loading the reference). An
  /// error is returned for every case.
  using Start = std::function<Status()>;

  /// Starts the thread at once. `ahead_bytes`: the feed waits while it holds at least this
  /// much that was not taken yet (so it holds at most that plus one case).
  CaseFeed(std::vector<CaseSpec> specs, Start start, Prepare prepare, Answer answer, size_t ahead_bytes);
  /// Stops after the case in progress and joins.
  ~CaseFeed();
  CaseFeed(const CaseFeed&) = delete;
  CaseFeed& operator=(const CaseFeed&) = delete;

  /// The next case in order, waiting for it; the error that stopped the feed, if it stopped
  /// before this case. Calling it more times than there are cases is a bug.
  Result<PreparedCase> Next();

  const std::vector<CaseSpec>& specs() const { return specs_; }

 private:
  void Produce();

  const std::vector<CaseSpec> specs_;
  const Start start_;
  const Prepare prepare_;
  const Answer answer_;
  const size_t ahead_bytes_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<PreparedCase> ready_;  // guarded by mutex_
  size_t ready_bytes_ = 0;          // guarded by mutex_
  std::optional<Error> failed_;     // guarded by mutex_; set when the feed stopped on an error
  bool stopping_ = false;           // guarded by mutex_
  size_t taken_ = 0;                // only the taker's thread
  std::thread thread_;
};

}  // namespace ksmith
