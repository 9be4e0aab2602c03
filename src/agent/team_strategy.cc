// A team of model roles (STARK, CudaForge): the planner names one idea, the coder applies it, the
// debugger fixes a kernel that failed (compile error, crash, wrong output) with the verdict's facts,
// and the judge reads a passing kernel's timing and profile and decides to continue the idea,
// switch, or stop. The hypotheses ledger (agent/hypothesis_ledger.h) keeps what each idea measured:
// an idea that stalls is set aside even when the judge would continue it, one that never passed
// and broke is dropped, one that broke after working is built on from its best kernel.
//
// Each role may have its own model ([roles.planner] in ksmith.toml; the loop routes by role) and
// every call is stored with its role. Plans and judgments are notes (calls without a candidate);
// the strategy reads its whole state from the run's attempts and notes, so a resumed run
// continues where it stopped.
#include <fmt/format.h>

#include "agent/hypothesis_ledger.h"
#include "agent/prompt.h"
#include "agent/strategy.h"
#include "agent/team_prompts.h"
#include "core/strings.h"

namespace ksmith {
namespace {

// The latest note of `role`, or null.
const Note* LatestNote(const RunState& state, const std::string& role) {
  for (auto it = state.notes.rbegin(); it != state.notes.rend(); ++it) {
    if (it->role == role) return &*it;
  }
  return nullptr;
}

MeasuredKernel Measured(const Attempt& attempt) { return {attempt.number, attempt.source, &*attempt.verdict}; }

class TeamStrategy : public Strategy {
 public:
  explicit TeamStrategy(const StrategyContext& context)
      : context_(context), backend_(context.backend), max_attempts_(context.max_attempts),
        starting_point_(context.starting_point) {
    const PromptContext prompt = context.prompt();
    system_prompt_ = BuildSystemPrompt(prompt);
    task_prompt_ = BuildTaskPrompt(prompt, "");
    first_task_prompt_ = BuildTaskPrompt(prompt, context.starting_point);
  }

  std::string name() const override { return "team"; }
  bool needs_model() const override { return true; }

  std::string FinishedBecause(const RunState& state) const override {
    const Note* judge = LastNoteIfLatest(state);
    if (judge != nullptr && judge->role == "judge" && ParseDecision(judge->content) == "stop") {
      return "the judge stopped: " + FirstLine(JudgmentAdvice(judge->content), 200);
    }
    return "";
  }

  std::vector<Step> Next(const RunState& state) override {
    if (state.attempts.size() >= max_attempts_) return {};
    const HypothesisLedger ledger = HypothesisLedger::FromRun(state);
    const Note* plan = LatestNote(state, "planner");
    if (plan == nullptr) return {Planner(state, ledger)};
    const std::string hypothesis = ParseHypothesis(plan->content);
    const Hypothesis* entry = ledger.Find(hypothesis);
    // The idea's best kernel, to build on, when its verdict reads.
    const bool has_base = entry != nullptr && entry->best_attempt && state.attempts[*entry->best_attempt].verdict;
    if (const Note* last = LastNoteIfLatest(state)) {
      if (last->role == "planner") return {Coder(state, hypothesis, plan->content)};
      // The judge spoke on the latest kernel.
      const std::string decision = ParseDecision(last->content);
      if (decision == "stop") return {};
      if (decision == "switch" || !has_base || !entry->active()) return {Planner(state, ledger)};
      return {Continue(state, *entry, JudgmentAdvice(last->content))};
    }
    const Attempt& latest = state.attempts.back();
    if (latest.passed() && latest.verdict) {
      // The ledger set a stalled idea aside: a new plan, whatever a judge would say.
      if (entry != nullptr && entry->status == "set aside") return {Planner(state, ledger)};
      return {Judge(hypothesis, latest, ledger)};
    }
    if (has_base && entry->status == "kept") {
      return {Continue(state, *entry, "Its last kernels failed; build on this one instead.")};
    }
    if (entry != nullptr && !entry->active()) return {Planner(state, ledger)};
    if (!latest.verdict) return {Retry(hypothesis, plan->content, latest)};
    return {Debugger(hypothesis, latest)};
  }

 private:
  // The latest note when it was written after the latest attempt (the last thing that happened).
  static const Note* LastNoteIfLatest(const RunState& state) {
    if (state.notes.empty() || state.notes.back().after_attempts < state.attempts.size()) return nullptr;
    return &state.notes.back();
  }

  static Step Kernel(const std::string& role, const std::string& op, const std::string& hypothesis) {
    Step step;
    step.role = role;
    step.search = {{"operator", op}, {"hypothesis", hypothesis}};
    return step;
  }

  static void SetParent(Step& step, const Attempt& parent) {
    step.parent_id = parent.candidate_id;
    step.search["parents"] = nlohmann::json::array({parent.number});
  }

  Step Planner(const RunState& state, const HypothesisLedger& ledger) const {
    Step step;
    step.role = "planner";
    step.writes_kernel = false;
    const Attempt* best = state.Best();
    if (best != nullptr && !best->verdict) best = nullptr;  // a stored verdict that did not read back
    const MeasuredKernel measured = best != nullptr ? Measured(*best) : MeasuredKernel{};
    const Note* judge = LatestNote(state, "judge");
    const std::string notes = best != nullptr ? context_.KnowledgeFor(*best) : "";
    step.messages = {{"system", PlannerSystemPrompt(backend_)},
                     {"user", first_task_prompt_ + "\n\n" + (notes.empty() ? "" : notes + "\n\n") +
                                  PlannerInstruction(ledger.Render(), best != nullptr ? &measured : nullptr,
                                                     judge != nullptr ? judge->content : "")}};
    return step;
  }

  Step Coder(const RunState& state, const std::string& hypothesis, const std::string& plan) const {
    Step step = Kernel("coder", "plan", hypothesis);
    const Attempt* best = state.Best();
    if (best != nullptr && best->verdict) {
      const MeasuredKernel measured = Measured(*best);
      step.messages = {{"system", system_prompt_}, {"user", task_prompt_ + "\n\n" + CoderInstruction(hypothesis, plan, &measured)}};
      SetParent(step, *best);
    } else {
      step.messages = {{"system", system_prompt_}, {"user", first_task_prompt_ + "\n\n" + CoderInstruction(hypothesis, plan, nullptr)}};
    }
    return step;
  }

  Step Continue(const RunState& state, const Hypothesis& entry, const std::string& advice) const {
    const Attempt& base = state.attempts[*entry.best_attempt];
    Step step = Kernel("coder", "continue", entry.name);
    step.messages = {{"system", system_prompt_},
                     {"user", task_prompt_ + "\n\n" + ContinueInstruction(entry.name, advice, Measured(base))}};
    SetParent(step, base);
    return step;
  }

  Step Retry(const std::string& hypothesis, const std::string& plan, const Attempt& failed) const {
    Step step = Kernel("coder", "retry", hypothesis);
    step.messages = {{"system", system_prompt_},
                     {"user", first_task_prompt_ + "\n\n" + RetryInstruction(hypothesis, plan, failed.extraction_error)}};
    return step;
  }

  Step Debugger(const std::string& hypothesis, const Attempt& broken) const {
    Step step = Kernel("debugger", "repair", hypothesis);
    const std::string notes = context_.KnowledgeFor(broken);
    step.messages = {{"system", system_prompt_},
                     {"user", task_prompt_ + "\n\n" + (notes.empty() ? "" : notes + "\n\n") +
                                  DebuggerInstruction(hypothesis, Measured(broken))}};
    SetParent(step, broken);
    return step;
  }

  Step Judge(const std::string& hypothesis, const Attempt& kernel, const HypothesisLedger& ledger) const {
    Step step;
    step.role = "judge";
    step.writes_kernel = false;
    step.messages = {{"system", JudgeSystemPrompt(backend_)},
                     {"user", task_prompt_ + "\n\n" + JudgeInstruction(hypothesis, Measured(kernel), ledger.Render())}};
    return step;
  }

  StrategyContext context_;
  std::string backend_;
  size_t max_attempts_;
  std::string starting_point_;
  std::string system_prompt_;
  std::string task_prompt_;        // without a starting point: the kernels are shown instead
  std::string first_task_prompt_;  // with the task's starting point
};

}  // namespace

std::unique_ptr<Strategy> MakeTeamStrategy(const StrategyContext& context) { return std::make_unique<TeamStrategy>(context); }

}  // namespace ksmith
