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
  /// Generates a case's inputs, or only lays it out for Answer to draw them (the CUDA session:
  /// its reference draws them on the GPU meanwhile). `spare` is a judged case handed back by
  /// Recycle, or empty: its buffers are the new case's to reuse (at a problem's own sizes, fresh
  /// pages for gigabytes cost more than drawing the values).
  using Prepare = std::function<PreparedCase(const CaseSpec&, PreparedCase spare)>;
  /// Completes the case: its inputs where Prepare left them to it, and prepared.expected (and
  /// .magnitude), every element of it: Prepare may have left a judged case's answer there for
  /// its memory. An error is the evaluator's, never the candidate's; the feed stops at the first.
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

  /// Hands a judged case back for its memory. While two cases taken are still out, a case as
  /// large as `ahead_bytes` is prepared only in the memory of one handed back (or when the
  /// taker waits for it), so that a verdict at a problem's own sizes reuses a few buffers.
  void Recycle(PreparedCase judged);
  /// The bytes of a handed-back case held for a case not yet begun (0 once every case began).
  size_t SpareBytes();

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
  size_t taken_ = 0;                // guarded by mutex_
  size_t returned_ = 0;             // guarded by mutex_: cases handed back to Recycle
  size_t started_ = 0;              // guarded by mutex_: cases the producer began
  int takers_waiting_ = 0;          // guarded by mutex_
  std::optional<PreparedCase> spare_;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace ksmith
