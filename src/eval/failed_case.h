// The first wrong-output case of an evaluation, handed to whoever asked for it once the verdict
// is final (`ksmith eval --dump-failure`: eval/failure_dump.h writes it out).
//
// A wrong_output verdict names its case by label ("n=7, ties, seed #2"), but the values behind
// that label come from the evaluation's secret seed and were gone once it ended: nobody could
// look at the inputs the kernel got wrong. The sessions judge every case in the evaluator, from
// their own copy of the worker's buffers, so the evaluator (never the sandboxed worker, whose
// walls forbid writing files) keeps the first wrong case and gives it out. Only a verdict that
// ended as wrong_output gives one: a passing verdict's cases stay secret, and a kernel that failed
// a case and then broke the contract gets an integrity_violation, not a copy of its inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eval/cases.h"
#include "eval/verdict.h"
#include "sandbox/layout.h"
#include "task/task.h"

namespace ksmith {

struct FailedCase {
  Task task;        // the backend's view of the task (cuda: its GPU-sized shapes)
  CaseSpec spec;    // shape, distribution, the case's own seed and its label
  CaseLayout layout;
  DimValues dims;   // every dim of the case, derived ones included
  std::string inputs;   // the input tensors' bytes, in slot order, as the candidate got them
  std::string outputs;  // the output tensors' bytes, in slot order, as the candidate wrote them
  std::vector<std::vector<double>> expected;  // per output tensor, the reference in double precision
  uint64_t evaluation_seed = 0;  // the evaluation's seed: `eval --seed` with it replays every case
  int seeds = 0;                 // EvalOptions::seeds, which the planned cases depend on too
};

/// Receives the failed case; called at most once per evaluation, on the session's thread.
using FailedCaseSink = std::function<void(const FailedCase&)>;

/// Kept by a verification session. Not thread-safe: the session's own thread calls it.
class FailedCaseKeeper {
 public:
  /// `sink` null: nothing is kept (the default; copying a case costs memory).
  FailedCaseKeeper(FailedCaseSink sink, int seeds) : sink_(std::move(sink)), seeds_(seeds) {}

  /// Keeps the case judged from `snapshot` (every tensor with its guards, slot order) when `check`
  /// found a wrong output and it is the first one; otherwise does nothing.
  void Keep(const Task& task, const CaseSpec& spec, const PreparedCase& prepared, std::string_view snapshot,
            const CaseCheck& check);

  /// Hands the kept case to the sink when `verdict` ended as a wrong_output; at most once.
  void Deliver(const Verdict& verdict, uint64_t evaluation_seed);

 private:
  FailedCaseSink sink_;
  int seeds_ = 0;
  std::optional<FailedCase> kept_;
  bool delivered_ = false;
};

}  // namespace ksmith
