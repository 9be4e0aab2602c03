// What the team strategy's roles are asked. The planner and the judge write no code: the planner
// names one optimization idea (a hypothesis) and how to apply it; the judge reads a passing
// kernel's measurements and decides whether to continue that idea, switch to another, or stop.
// The coder applies a plan, the debugger fixes a kernel that failed without giving up its idea.
// Their answers are read back by the Parse functions, leniently: a model's formatting is not a
// reason to lose its answer.
#pragma once

#include <string>

#include "agent/evolve_prompts.h"

namespace ksmith {

/// The planner's and the judge's system prompt: their role, around the task prompt.
std::string PlannerSystemPrompt(const std::string& backend);
std::string JudgeSystemPrompt(const std::string& backend);

/// The ledger (HypothesisLedger::Render, may be empty), the best kernel so far (may be null) and
/// the judge's last words (may be empty): name one idea to try next.
std::string PlannerInstruction(const std::string& ledger, const MeasuredKernel* best, const std::string& last_judgment);
/// Apply the planner's idea, to `base` when there is one (else to the task's starting point).
std::string CoderInstruction(const std::string& hypothesis, const std::string& plan, const MeasuredKernel* base);
/// Go further with the same idea from its best kernel, with the judge's advice.
std::string ContinueInstruction(const std::string& hypothesis, const std::string& advice, const MeasuredKernel& base);
/// The last answer had no kernel in it: try the plan again.
std::string RetryInstruction(const std::string& hypothesis, const std::string& plan, const std::string& extraction_error);
/// A kernel of the idea failed: fix it, keeping the idea.
std::string DebuggerInstruction(const std::string& hypothesis, const MeasuredKernel& broken);
/// A passing kernel of the idea, what was measured of it and the ledger: continue, switch or stop.
std::string JudgeInstruction(const std::string& hypothesis, const MeasuredKernel& kernel, const std::string& ledger);

/// The idea a plan names: its "Hypothesis:" line, else its first line; short, without markup.
std::string ParseHypothesis(const std::string& plan);
/// "continue", "switch" or "stop" from a judgment's "Decision:" line; "continue" when it has none.
std::string ParseDecision(const std::string& judgment);
/// What the judgment says besides its decision line.
std::string JudgmentAdvice(const std::string& judgment);

}  // namespace ksmith
