#include "agent/team_prompts.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "agent/feedback.h"
#include "core/strings.h"

namespace ksmith {
namespace {

constexpr size_t kHypothesisChars = 80;

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Markdown a model puts around a label or a value: "**Hypothesis:**", "`tile K`", "- ".
std::string Unmarked(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != '*' && c != '`' && c != '#' && c != '"') out += c;
  }
  std::string_view trimmed = Trim(out);
  while (!trimmed.empty() && (trimmed.front() == '-' || trimmed.front() == ' ')) trimmed.remove_prefix(1);
  return std::string(Trim(trimmed));
}

// The text after "label:" on the first line that starts with it (markup aside), or nullopt.
std::optional<std::string> Labelled(const std::string& text, const std::string& label) {
  for (const auto& line : SplitLines(text)) {
    const std::string plain = Unmarked(line);
    if (Lower(plain).rfind(label + ":", 0) == 0) return Unmarked(plain.substr(label.size() + 1));
  }
  return std::nullopt;
}

std::string Best(const MeasuredKernel* kernel) {
  if (kernel == nullptr) return "No kernel has passed yet.";
  return fmt::format("The fastest correct kernel so far:\n\n{}\n{}", KernelListing(kernel->number, kernel->source),
                     MeasuredLine(*kernel));
}

}  // namespace

std::string PlannerSystemPrompt(const std::string& backend) {
  return fmt::format(
      "You are the planner of a team of models writing the fastest correct {} kernel for the task below. You read "
      "what has been tried and measured, and choose the one optimization idea the coder tries next. You never write "
      "code.",
      backend);
}

std::string JudgeSystemPrompt(const std::string& backend) {
  return fmt::format(
      "You are the judge of a team of models writing the fastest correct {} kernel for the task below. You read a "
      "correct kernel's measurements and decide whether the team continues its current idea, switches to another, "
      "or stops because the kernel is at the hardware's limit. You never write code.",
      backend);
}

std::string PlannerInstruction(const std::string& ledger, const MeasuredKernel* best, const std::string& last_judgment) {
  std::string text = Best(best) + "\n\n";
  if (!ledger.empty()) {
    text += "Ideas tried so far, with what they measured (the hypotheses ledger):\n" + ledger + "\n";
    text += "Do not propose an idea that was set aside or broke again, unless you say what will be different.\n\n";
  }
  if (!last_judgment.empty()) text += "The judge's last words:\n" + last_judgment + "\n\n";
  text +=
      "Choose one optimization idea (tiling, vectorized loads, fusing passes, warp shuffles, shared memory, tensor "
      "cores, a different parallel split, ...) that addresses the bottleneck the measurements show. Answer with a "
      "first line `Hypothesis: <the idea in a few words>`, then at most five lines on how the coder should apply it. "
      "No code.";
  return text;
}

std::string CoderInstruction(const std::string& hypothesis, const std::string& plan, const MeasuredKernel* base) {
  std::string text = base != nullptr ? Best(base) + "\n\n" : "";
  text += fmt::format("The planner's idea to try: \"{}\"\n{}\n\nWrite the kernel that applies this idea{}. {}", hypothesis,
                      plan, base != nullptr ? " to the kernel above" : "", kKernelAnswerForm);
  return text;
}

std::string ContinueInstruction(const std::string& hypothesis, const std::string& advice, const MeasuredKernel& base) {
  return fmt::format(
      "The best kernel of the idea \"{}\", and what was measured of it:\n\n{}\n{}\n\n{}\n\nThe judge's advice:\n{}\n\n"
      "Go further with the same idea. {}",
      hypothesis, KernelListing(base.number, base.source), MeasuredLine(base), RenderFeedback(*base.verdict, base.source),
      advice.empty() ? "(none)" : advice, kKernelAnswerForm);
}

std::string RetryInstruction(const std::string& hypothesis, const std::string& plan, const std::string& extraction_error) {
  return fmt::format(
      "Your last answer had no kernel that could be used: {}\n\nThe idea to apply is still \"{}\":\n{}\n\n{}",
      FirstLine(extraction_error, 300), hypothesis, plan, kKernelAnswerForm);
}

std::string DebuggerInstruction(const std::string& hypothesis, const MeasuredKernel& broken) {
  return fmt::format("You are the team's debugger. The idea being tried is \"{}\".\n\n{}", hypothesis,
                     RepairInstruction(broken));
}

std::string JudgeInstruction(const std::string& hypothesis, const MeasuredKernel& kernel, const std::string& ledger) {
  std::string text = fmt::format(
      "The coder's kernel for the idea \"{}\" is correct. What was measured of it:\n\n{}\n{}\n\n{}\n\n", hypothesis,
      KernelListing(kernel.number, kernel.source), MeasuredLine(kernel), RenderFeedback(*kernel.verdict, kernel.source));
  if (!ledger.empty()) text += "Ideas tried so far (the hypotheses ledger):\n" + ledger + "\n";
  text +=
      "Answer with a first line `Decision: continue` (the idea has more to give: say what to change next), "
      "`Decision: switch` (try another idea: say why) or `Decision: stop` (the kernel is at the hardware's limit: "
      "the roofline fraction above says how close), then at most three lines for the team.";
  return text;
}

std::string ParseHypothesis(const std::string& plan) {
  std::string idea = Labelled(plan, "hypothesis").value_or("");
  if (idea.empty()) {
    for (const auto& line : SplitLines(plan)) {
      idea = Unmarked(line);
      if (!idea.empty()) break;
    }
  }
  if (idea.size() > kHypothesisChars) idea = idea.substr(0, kHypothesisChars);
  while (!idea.empty() && (idea.back() == '.' || idea.back() == ' ')) idea.pop_back();
  return idea.empty() ? "unnamed idea" : idea;
}

std::string ParseDecision(const std::string& judgment) {
  const std::string decision = Lower(Labelled(judgment, "decision").value_or(""));
  for (const char* word : {"stop", "switch", "continue"}) {
    if (decision.rfind(word, 0) == 0) return word;
  }
  return "continue";
}

std::string JudgmentAdvice(const std::string& judgment) {
  std::string advice;
  for (const auto& line : SplitLines(judgment)) {
    if (Lower(Unmarked(line)).rfind("decision:", 0) == 0) continue;
    advice += line + "\n";
  }
  return std::string(Trim(advice));
}

}  // namespace ksmith
