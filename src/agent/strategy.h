// Strategies decide what to try next from everything the run has tried so far. They share one
// proposer (a model behind llm/provider.h) and one evaluator, both driven by the optimize loop;
// a strategy only plans steps. Because a strategy reads its whole state from the run's attempts,
// a run resumed from the store continues exactly where it stopped, and new strategies (evolve:
// islands and crossover; team: planner, coder, debugger, judge, each a `role` with its own model)
// plug in here without touching the proposer or the evaluator.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/eval_options.h"
#include "eval/verdict.h"

#include "agent/conversation.h"
#include "agent/prompt.h"
#include "agent/tune_knobs.h"
#include "core/result.h"
#include "knowledge/retrieval.h"
#include "llm/chat_protocol.h"
#include "task/task.h"

namespace ksmith {

class ModelFormat;  // agent/model_format.h

/// One candidate of the run as the store keeps it.
struct Attempt {
  int64_t candidate_id = 0;      // the store's id, unique across runs
  int64_t number = 0;            // 1, 2, 3... within its run: what people are shown
  std::optional<int64_t> parent_id;
  std::string origin;            // "llm", "tune"
  std::string role;
  std::string answer;            // the model's whole answer; empty for tune
  std::string explanation;       // the model's words before its code, as the store keeps them
  std::string source;            // empty when no kernel could be extracted
  std::string extraction_error;
  nlohmann::json knobs = nlohmann::json::object();
  nlohmann::json search = nlohmann::json::object();  // where the strategy placed it (CandidateRecord::search)
  std::optional<Verdict> verdict;
  std::string status;            // verdict status, "extraction_failed" or "pending"
  std::optional<double> speedup;
  /// The number of the earlier candidate of the run with the same kernel (NormalizedSource),
  /// whose verdict this one got without being evaluated again.
  std::optional<int64_t> repeat_of;

  bool passed() const { return status == "passed"; }
  bool pending() const { return status == "pending"; }
};

/// Whether calls of `role` answer with kernels (coder, debugger; "" in runs stored before roles).
inline bool WritesKernels(const std::string& role) { return role.empty() || role == "coder" || role == "debugger"; }

/// A model's answer that is not a kernel (a team's plan or judgment), kept as the run's call.
struct Note {
  std::string role;            // "planner", "judge"
  std::string content;         // the whole answer
  size_t after_attempts = 0;   // the run's attempts when it was written: where it falls among them
};

/// In an interactive run, the person's choice to go on from an earlier kernel.
struct Rollback {
  size_t after_attempts = 0;  // the run's attempts when it was chosen: what came before is set aside
  int64_t to_number = 0;      // the candidate (its number in the run) the search continues from
};

/// What the person did at one review of an interactive run (agent/proposal_review.h), as the store
/// keeps it (InterventionRecord).
struct Intervention {
  std::string action;           // "approve", "edit", "constrain", "rollback", "stop"
  size_t after_attempts = 0;    // the run's attempts when it was done
  std::optional<int64_t> candidate_number;  // the candidate it made (approve, edit)
  nlohmann::json detail = nlohmann::json::object();  // InterventionRecord::detail
};

struct RunState {
  std::vector<Attempt> attempts;  // in the order they were made
  std::vector<Note> notes;        // in the order they were written
  std::vector<Intervention> interventions;  // the person's, in order (interactive runs)

  /// The person's constraints, in the order given: each joins every later prompt.
  std::vector<std::string> Constraints() const;
  /// The person's rollbacks, in order; strategies that FollowsRollbacks() honor them.
  std::vector<Rollback> Rollbacks() const;

  /// The passing attempt with the highest speedup; null when none passed.
  const Attempt* Best() const;
};

/// What to do next: ask a model (messages set), or evaluate a source as it is (tune).
struct Step {
  std::string role = "coder";
  std::string origin = "llm";
  std::vector<ChatMessage> messages;
  std::string source;
  KnobSetting knobs;
  std::optional<int64_t> parent_id;
  nlohmann::json search = nlohmann::json::object();  // recorded with the candidate (CandidateRecord::search)
  /// false: the answer is a Note (a plan, a judgment), recorded as the call alone, no candidate.
  bool writes_kernel = true;

  bool asks_model() const { return !messages.empty(); }
};

/// Everything a strategy may read about the task and the target.
struct StrategyContext {
  const Task& task;
  std::string backend;                     // "cpu" or "cuda"
  nlohmann::json device_facts;             // for the prompt
  const ModelFormat* format = nullptr;     // how the model writes a candidate; null: ksmith's contract
  std::string starting_point;              // a kernel the model may start from (the task's seed); may be empty
  std::string tune_source;                 // tune: the kernel with @tune knobs
  ConversationBudget conversation;
  size_t max_attempts = 20;                // the run stops after this many attempts
  size_t parallel = 4;                     // sample: proposals in flight at once; evolve: a generation's size
  uint64_t seed = 0;                       // tune: the order of a sampled knob space; evolve: its choices
  /// evolve: who proposes, "model" or "knobs" (settings of tune_source's @tune knobs, no model).
  std::string proposer = "model";
  size_t islands = 4;                      // evolve: populations that evolve apart and exchange their best
  /// sample, evolve with a model: write the next batch while the last one is judged.
  bool overlap = true;
  /// Notes from the knowledge base for this task and target, shown with the task (may be empty).
  std::string knowledge;
  /// Where refine and team look up notes on a failure's class or a kernel's bottleneck during the
  /// run (null: not at all); `knowledge_query` holds the task's and target's fields, and each
  /// lookup gets `knowledge_tokens`.
  const KnowledgeSource* knowledge_source = nullptr;
  RetrievalQuery knowledge_query;
  int64_t knowledge_tokens = 0;

  /// What the prompts are built from, the knowledge included.
  PromptContext prompt() const {
    PromptContext context{task, backend, device_facts, format};
    context.knowledge = knowledge;
    return context;
  }
  /// Notes on what `attempt` shows (its failure's class, or its bottleneck when it passed), not
  /// already in `knowledge`; empty without a source or a match.
  std::string KnowledgeFor(const Attempt& attempt) const;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  virtual bool needs_model() const = 0;
  /// The next steps (at least one), or an empty list when the strategy has nothing left to try.
  virtual std::vector<Step> Next(const RunState& state) = 0;
  /// The most candidates it can ever make, when that is finite (tune: its knob settings), so
  /// that a run can say up front that it will end before its --max-candidates.
  virtual std::optional<size_t> Capacity() const { return std::nullopt; }
  /// Whether Next may be asked while earlier candidates are still being judged (status
  /// "pending"). Such a strategy returns an empty list to wait for verdicts, and the loop asks again
  /// once one is in; it ends only when Next is empty with nothing left in flight. The evaluator
  /// then works while models write. Otherwise Next sees every candidate judged.
  virtual bool ProposesAhead() const { return false; }
  /// (optional) One line on where the search stands once a batch is judged, for the progress
  /// lines (evolve: its generation and archive); empty to say nothing.
  virtual std::string BatchSummary(const RunState& state) const {
    (void)state;
    return "";
  }
  /// Whether the next proposals build on the kernel a person rolled back to (RunState::rollbacks)
  /// in an interactive run; a strategy that does not keeps its own choice of parents.
  virtual bool FollowsRollbacks() const { return false; }
  /// (optional) Why Next returned nothing, for the run's stop reason ("the judge stopped: ...");
  /// empty: "the strategy has nothing left to try".
  virtual std::string FinishedBecause(const RunState& state) const {
    (void)state;
    return "";
  }
};

std::unique_ptr<Strategy> MakeSampleStrategy(const StrategyContext& context);
std::unique_ptr<Strategy> MakeRefineStrategy(const StrategyContext& context);
/// Fails when the tune source declares no knobs or declares them wrongly.
Result<std::unique_ptr<Strategy>> MakeTuneStrategy(const StrategyContext& context);
/// With proposer "knobs", fails as MakeTuneStrategy does.
Result<std::unique_ptr<Strategy>> MakeEvolveStrategy(const StrategyContext& context);

/// planner, coder, debugger and judge, each a role that may have a model of its own.
std::unique_ptr<Strategy> MakeTeamStrategy(const StrategyContext& context);

/// "sample", "refine", "tune", "evolve" or "team"; an unknown name or a tune without knobs is an explained error.
Result<std::unique_ptr<Strategy>> MakeStrategy(const std::string& name, const StrategyContext& context);

/// The strategies this build knows, for --help and error messages.
std::vector<std::string> StrategyNames();

}  // namespace ksmith
