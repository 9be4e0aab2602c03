// The optimize loop: asks the strategy what to try, has the model propose it (several calls in
// flight when the strategy allows), extracts the kernel, evaluates it, and records every step in
// the store the moment it finishes. A strategy that ProposesAhead is asked for its next batch as
// soon as the last batch's answers are in, while their evaluations run; the run records how busy
// the evaluator was (agent/activity_clock.h). All state lives in the store, so Run() on a run that was
// killed resumes it: candidates already evaluated are kept, pending ones are evaluated, and the
// strategy continues from the attempts it finds.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <optional>
#include <string>

#include "agent/activity_clock.h"
#include "agent/proposal_review.h"
#include "agent/strategy.h"
#include "core/result.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "llm/budget.h"
#include "llm/provider.h"
#include "store/run_store.h"
#include "task/task.h"

namespace ksmith {

/// The evaluation behind the loop, for one task on one backend (in ksmith, a job of the
/// evaluation service: service/eval_service.h).
class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  /// Queues the candidate's evaluation; the future holds its verdict. Never throws for
  /// anything a candidate does. Several may be in flight at once.
  virtual std::future<Verdict> Submit(const CandidateSource& candidate) = 0;
  /// Whether SubmitProfiled can give profiler facts (a backend with a profiler).
  virtual bool profiles() const { return false; }
  /// Evaluates the candidate again with its profile (a "profile" stage with ncu's bottleneck
  /// facts). Only when profiles().
  virtual std::future<Verdict> SubmitProfiled(const CandidateSource& candidate) { return Submit(candidate); }
};

struct LoopProgress {
  size_t attempts = 0;    // candidates made, extraction failures included
  size_t decided = 0;     // candidates with an outcome: a verdict, or no kernel in the answer
  size_t evaluated = 0;   // candidates with a verdict
  size_t passed = 0;
  std::optional<double> best_speedup;
  int64_t tokens = 0;
  double cost_dollars = 0;
  std::string last;       // what just happened, one line
  int64_t candidate = 0;  // the candidate `last` is about: its number in the run; 0: the search as a whole
};

/// Who answers a role's calls, and with which model settings.
struct RoleRoute {
  ChatProvider* provider = nullptr;
  ChatRequest request;  // model, output tokens, temperature; the messages come from each step
};

struct LoopSettings {
  ChatRequest request;   // model, output tokens, temperature; the messages come from each step
  /// Roles with a model of their own ([roles.planner] in ksmith.toml); any other role is answered
  /// by the loop's provider with `request`.
  std::map<std::string, RoleRoute> roles;
  /// Model calls that fail in a row (no answer at all) before the run gives up: a bad key or a
  /// dead server fails every call the same way, and retrying the strategy would only repeat it.
  int max_failed_calls_in_row = 3;
  std::function<void(const LoopProgress&)> progress;
  /// Set from a signal handler: the loop stops between steps and the run stays resumable.
  const std::atomic<bool>* stop_requested = nullptr;
  /// How the model writes candidates: what is extracted from its answers and how they are judged.
  /// Null: ksmith's contract.
  const ModelFormat* format = nullptr;
  /// The backend the candidates are for: it says what a candidate in an answer looks like.
  std::string backend = "cpu";
  /// Profile the run's best kernel (again, under the profiler) once this many candidates were
  /// judged since the last profile, so that its bottleneck facts reach the next prompts; 0: never.
  size_t profile_every = 0;
  /// A person who reviews each proposal before it is judged (`--interactive`); null: none. The
  /// strategy should not propose ahead then (StrategyContext::overlap off), so that they see each
  /// verdict before the next proposal.
  ProposalReviewer* reviewer = nullptr;
};

struct LoopOutcome {
  std::string status;       // "finished", "stopped" (interrupted; resumable), "failed"
  std::string stop_reason;  // one line
  RunState state;
  std::optional<int64_t> best_candidate_id;
  Activity activity;  // over every session of the run
};

/// Reads a run's attempts back from the store (the model's answers joined from its calls).
Result<RunState> LoadRunState(const RunStore& store, const std::string& run_id);

class OptimizeLoop {
 public:
  /// `provider` may be null for strategies that need no model.
  OptimizeLoop(RunStore& store, std::string run_id, const Task& task, Strategy& strategy,
               ChatProvider* provider, CandidateEvaluator& evaluator, Budget& budget, LoopSettings settings)
      : store_(store), run_id_(std::move(run_id)), task_(task), strategy_(strategy), provider_(provider),
        evaluator_(evaluator), budget_(budget), settings_(std::move(settings)) {}

  /// Runs until the strategy is done, the budget is spent, the model keeps failing, or a stop
  /// is requested; then marks the run finished (or stopped) in the store. Errors are the store's.
  Result<LoopOutcome> Run();

 private:
  struct InFlight {
    size_t index;  // into state_.attempts
    std::future<Verdict> verdict;
    bool profile = false;  // the attempt evaluated again under the profiler, not its own verdict
  };

  /// Queues the evaluation of `state_.attempts[index]` (or, for a kernel seen before, waits for
  /// that one's verdict).
  Status StartEvaluation(size_t index);
  /// Records the verdict of `state_.attempts[index]` in the store and the run state.
  Status RecordVerdict(size_t index, Verdict verdict);
  /// Records every verdict that is in, and the repeats and batch summaries they complete. With
  /// `wait`, first waits until at least one is in (when any is in flight).
  Status CollectVerdicts(bool wait);
  /// Waits for and records every verdict still in flight: no evaluation outlives the loop.
  Status DrainEvaluations();
  /// Gives each waiting repeat whose original is now judged that verdict.
  Status ResolveRepeats();
  /// Reports the strategy's summary for each batch whose candidates are all decided, in order.
  void ReportFinishedBatches();
  /// Starts profiling the best kernel when settings_.profile_every verdicts came since the last.
  void MaybeProfile();
  /// Stores the profiled verdict of attempt `index` and adds its profile stage to the attempt's.
  Status RecordProfile(size_t index, const Verdict& profiled);
  /// Starts an evaluation (or a profile) on its own thread, noted by the activity clock.
  std::future<Verdict> Timed(std::future<Verdict> submitted);
  /// Starts the batch's model calls and records each answer as it arrives, queueing its
  /// evaluation; verdicts that come in meanwhile are recorded. Sets `stop_reason` when the
  /// replayed answers run out.
  Status RunBatch(const std::vector<Step>& steps, std::string& stop_reason);
  /// The earlier attempt of the run with the same kernel as attempt `index`, if any.
  std::optional<size_t> EarlierSameKernel(size_t index);
  /// Gives attempt `index` the verdict of `original` (decided), as a repeat.
  Status RecordRepeat(size_t index, size_t original);
  /// Records the call and, unless the person set its kernel aside (`declined`), its candidate.
  Result<Attempt> RecordModelAnswer(const Step& step, LlmCall call, bool& exhausted, bool& declined);
  /// Records a non-model step's candidate, unless the person set it aside (`declined`).
  Result<Attempt> RecordProposal(const Step& step, bool& declined);
  /// What the person decided about a proposal (with a reviewer).
  struct Review {
    bool judge = true;  // false: rolled back or stopped; no candidate is made
    std::optional<InterventionRecord> decision;  // approve or edit: recorded with the candidate it makes
  };
  /// Shows `record` (about to become a candidate) to the reviewer, records each constraint,
  /// rollback or stop as it is given, and applies an edit to `record`. Without a reviewer, or for
  /// an answer without a kernel, the proposal is judged as it is.
  Result<Review> ReviewProposal(CandidateRecord& record, std::optional<int64_t> llm_call_id);
  /// Adds `record` to the store (after its review) and records the person's decision with it.
  Result<Attempt> AddReviewedCandidate(CandidateRecord& record, const Review& review, const std::string& answer);
  /// Records a plan's or a judgment's call (no candidate) and adds its Note to the state.
  Status RecordNote(const Step& step, LlmCall call, bool& exhausted);
  /// The provider and request for a role's calls.
  RoleRoute RouteFor(const std::string& role) const;
  /// Reports what just happened to candidate number `candidate`.
  void Report(int64_t candidate, const std::string& line);
  bool StopRequested() const { return settings_.stop_requested != nullptr && settings_.stop_requested->load(); }

  RunStore& store_;
  std::string run_id_;
  const Task& task_;
  Strategy& strategy_;
  ChatProvider* provider_;
  CandidateEvaluator& evaluator_;
  Budget& budget_;
  LoopSettings settings_;
  RunState state_;
  int failed_calls_in_row_ = 0;
  std::string last_call_error_;
  std::map<std::string, size_t> kernels_seen_;  // NormalizedSource -> the first attempt with it
  // Before evaluating_: the evaluations' threads note their end on it, so it must outlive them.
  ActivityClock clock_;
  std::vector<InFlight> evaluating_;
  std::vector<std::pair<size_t, size_t>> waiting_repeats_;  // (attempt, the earlier one being judged)
  std::vector<std::vector<size_t>> open_batches_;           // attempts of batches not yet summarized
  std::set<int64_t> profiled_;      // candidate ids with a stored profile
  size_t decided_at_profile_ = 0;   // verdicts in when the last profile started
  bool profiler_done_ = false;      // no profiler, or it gave nothing: said once, not tried again
  bool draining_ = false;           // the run is ending: only the verdicts in flight are collected
  bool person_stopped_ = false;     // the reviewer stopped the run: no more candidates are made
};

}  // namespace ksmith
