// The feedback loop: each proposal sees the task, the conversation so far (budgeted by
// agent/conversation.h) and the verdict of the last attempt. A chain that fails the same way
// several times in a row is an error cycle: the chain is cut, and the model restarts from the
// best kernel so far with the cycle named, instead of spending the budget on the same mistake.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>

#include <fmt/format.h>

#include "agent/feedback.h"
#include "agent/prompt.h"
#include "agent/strategy.h"

namespace ksmith {
namespace {

constexpr size_t kCycleLength = 3;
constexpr size_t kSignatureChars = 96;

std::string WithoutNumbers(const std::string& text) {
  std::string kept;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+') continue;
    kept.push_back(c);
    if (kept.size() >= kSignatureChars) break;
  }
  return kept;
}

// What makes two failures "the same": the stage and what failed there (its kind, the input
// distribution, the output, the signal, the first compiler error or audit rule), without numbers:
// line numbers, error values and sizes change from attempt to attempt while the mistake does not.
std::string FailureSignature(const Attempt& attempt) {
  if (attempt.passed()) return {};
  if (!attempt.verdict) return attempt.status + ":" + WithoutNumbers(attempt.extraction_error);
  const Verdict& verdict = *attempt.verdict;
  std::string signature = attempt.status;
  const StageRecord* failed = verdict.FailedStage();
  if (failed == nullptr) return signature + ":" + WithoutNumbers(verdict.reason);  // made without running
  const StageDetails& details = failed->details;
  signature += ":" + failed->name;
  if (const auto& failure = details.failure) {
    signature += std::string(":") + FailureKindName(failure->kind);
    if (failure->at) signature += ":" + failure->at->distribution;
    if (failure->mismatch) signature += ":" + failure->mismatch->output;
    signature += ":" + std::to_string(failure->signal) + failure->cuda_error_name;
  }
  if (!details.diagnostics.empty()) signature += ":" + WithoutNumbers(details.diagnostics.front().message);
  if (!details.findings.empty()) signature += ":" + details.findings.front().rule;
  return signature;
}

// Attempts that carry a model answer belong to the conversation; a failed call (no answer) does
// not: there is nothing the model said to show it.
// A kernel the person edited is the model's answer as judged (LoadRunState puts the edit in it).
bool InConversation(const Attempt& attempt) {
  return (attempt.origin == "llm" || attempt.origin == "edited") && !attempt.answer.empty();
}

Turn MakeTurn(const Attempt& attempt) {
  Turn turn;
  turn.candidate_id = attempt.candidate_id;
  turn.number = attempt.number;
  turn.answer = attempt.answer;
  if (attempt.verdict) {
    turn.feedback = RenderFeedback(*attempt.verdict, attempt.source);
    turn.summary = SummarizeVerdict(*attempt.verdict);
    if (attempt.repeat_of) {
      // The model repeated itself: say so first, so that the next answer changes the code.
      turn.feedback = fmt::format("This kernel is the same as candidate {} (only comments or spacing differ), so it "
                                  "was not evaluated again: change the code itself. Its verdict, again:\n\n",
                                  *attempt.repeat_of) + turn.feedback;
      turn.summary = fmt::format("repeat of candidate {}: {}", *attempt.repeat_of, turn.summary);
    }
  } else {
    turn.feedback = RenderExtractionFeedback(attempt.extraction_error);
    turn.summary = "no kernel: " + attempt.extraction_error.substr(0, 160);
  }
  return turn;
}

class RefineStrategy : public Strategy {
 public:
  explicit RefineStrategy(const StrategyContext& context)
      : context_(context), max_attempts_(context.max_attempts), budget_(context.conversation) {
    const PromptContext prompt = context.prompt();
    system_prompt_ = BuildSystemPrompt(prompt);
    task_prompt_ = BuildTaskPrompt(prompt, context.starting_point);
  }

  std::string name() const override { return "refine"; }
  bool needs_model() const override { return true; }
  bool FollowsRollbacks() const override { return true; }

  std::vector<Step> Next(const RunState& state) override {
    if (state.attempts.size() >= max_attempts_) return {};
    // Replaying the cycle detector over the whole history (rather than keeping its state) makes
    // a resumed run cut its chains exactly where the interrupted one did.
    size_t chain_start = 0;
    std::string cycle;
    // A person's rollback (interactive runs) starts a new chain from the kernel they chose.
    std::optional<int64_t> rolled_back_to;
    const std::vector<Rollback> rollbacks = state.Rollbacks();
    size_t next_rollback = 0;
    auto apply_rollbacks = [&](size_t position) {
      for (; next_rollback < rollbacks.size() && rollbacks[next_rollback].after_attempts <= position; ++next_rollback) {
        chain_start = rollbacks[next_rollback].after_attempts;
        rolled_back_to = rollbacks[next_rollback].to_number;
        cycle.clear();
      }
    };
    for (size_t i = 0; i < state.attempts.size(); ++i) {
      apply_rollbacks(i);
      cycle.clear();
      if (i + 1 - chain_start < kCycleLength) continue;
      const std::string signature = FailureSignature(state.attempts[i]);
      if (signature.empty()) continue;
      bool repeated = true;
      for (size_t back = 1; back < kCycleLength && repeated; ++back) {
        repeated = FailureSignature(state.attempts[i - back]) == signature;
      }
      if (!repeated) continue;
      cycle = signature;
      chain_start = i + 1;
      rolled_back_to.reset();
    }
    apply_rollbacks(state.attempts.size());
    // The kernel rolled back to, until the new chain has a kernel of its own (a failed call or an
    // answer without code does not replace it).
    const Attempt* anchor = nullptr;
    const bool chain_has_kernel = std::any_of(state.attempts.begin() + static_cast<std::ptrdiff_t>(chain_start),
                                              state.attempts.end(), [](const Attempt& a) { return !a.source.empty(); });
    if (rolled_back_to && !chain_has_kernel) {
      for (const auto& attempt : state.attempts) {
        if (attempt.number == *rolled_back_to && !attempt.source.empty()) anchor = &attempt;
      }
    }
    std::vector<Turn> turns;
    std::optional<int64_t> last_in_chain;
    for (size_t i = chain_start; i < state.attempts.size(); ++i) {
      const Attempt& attempt = state.attempts[i];
      last_in_chain = attempt.candidate_id;
      if (InConversation(attempt)) turns.push_back(MakeTurn(attempt));
    }
    const Attempt* best = state.Best();
    std::optional<Turn> best_turn;
    std::string best_source;
    // After a rollback the kernel chosen is the one to improve, not the best so far.
    if (best != nullptr && InConversation(*best) && anchor == nullptr) {
      best_turn = MakeTurn(*best);
      best_source = best->source;
    }
    std::string instruction;
    if (!cycle.empty()) {
      const Attempt& last = state.attempts.back();
      instruction = "Your last " + std::to_string(kCycleLength) + " attempts failed the same way (" +
                    (last.verdict ? SummarizeVerdict(*last.verdict) : last.extraction_error.substr(0, 200)) +
                    "). That approach is not working: start again from " +
                    (best_turn ? "the best kernel so far, shown above," : "the task") +
                    " and take a different approach. Answer with one complete kernel in one code block.";
    } else if (anchor != nullptr) {
      instruction = fmt::format(
          "The person running this search rolled back to candidate {} ({}). Continue from that kernel, not from "
          "the latest one:\n```\n{}\n```\n{} Answer with the complete kernel in one code block.",
          anchor->number, anchor->verdict ? SummarizeVerdict(*anchor->verdict) : anchor->status, anchor->source,
          anchor->passed() ? "Make it faster while keeping it correct." : "Fix it.");
    } else if (!turns.empty()) {
      instruction = state.attempts.back().passed()
                        ? "Make it faster while keeping it correct. Answer with the complete kernel in one code block."
                        : "Fix it. Answer with the complete corrected kernel in one code block.";
    }
    // Notes on the last verdict's failure class or bottleneck, before what to do.
    if (!state.attempts.empty() && !instruction.empty()) {
      const Attempt& about = anchor != nullptr ? *anchor : state.attempts.back();
      if (const std::string notes = context_.KnowledgeFor(about); !notes.empty()) {
        instruction = notes + "\n\n" + instruction;
      }
    }
    Step step;
    step.messages = BuildConversation(system_prompt_, task_prompt_, turns, best_turn, best_source, instruction,
                                      budget_);
    step.parent_id = !cycle.empty() ? (best != nullptr ? std::optional(best->candidate_id) : std::nullopt)
                     : anchor != nullptr ? std::optional(anchor->candidate_id)
                                         : last_in_chain;
    return {std::move(step)};
  }

 private:
  StrategyContext context_;
  size_t max_attempts_;
  ConversationBudget budget_;
  std::string system_prompt_;
  std::string task_prompt_;
};

}  // namespace

std::unique_ptr<Strategy> MakeRefineStrategy(const StrategyContext& context) {
  return std::make_unique<RefineStrategy>(context);
}

}  // namespace ksmith
