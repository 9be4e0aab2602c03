#include "agent/strategy.h"

#include <algorithm>

#include "agent/prompt.h"
#include "core/strings.h"

namespace ksmith {

std::vector<std::string> RunState::Constraints() const {
  std::vector<std::string> constraints;
  for (const auto& intervention : interventions) {
    if (intervention.action == "constrain") constraints.push_back(intervention.detail.value("constraint", std::string()));
  }
  return constraints;
}

std::vector<Rollback> RunState::Rollbacks() const {
  std::vector<Rollback> rollbacks;
  for (const auto& intervention : interventions) {
    if (intervention.action == "rollback") {
      rollbacks.push_back({intervention.after_attempts, intervention.detail.value("to_candidate", int64_t{0})});
    }
  }
  return rollbacks;
}

const Attempt* RunState::Best() const {
  const Attempt* best = nullptr;
  for (const auto& attempt : attempts) {
    if (!attempt.passed()) continue;
    // An untimed pass (speedup unknown) still beats having nothing.
    const double speedup = attempt.speedup.value_or(0);
    if (best == nullptr || speedup > best->speedup.value_or(0)) best = &attempt;
  }
  return best;
}

std::string StrategyContext::KnowledgeFor(const Attempt& attempt) const {
  if (knowledge_source == nullptr || knowledge_tokens <= 0 || attempt.pending()) return "";
  RetrievalQuery query = knowledge_query;
  std::string about;
  if (attempt.passed()) {
    if (!attempt.verdict || !attempt.verdict->timing || attempt.verdict->timing->bound_by.empty()) return "";
    query.bottleneck = attempt.verdict->timing->bound_by;
    about = "a " + query.bottleneck + "-bound kernel";
  } else {
    query.error_class = attempt.status;
    about = attempt.status;
  }
  // A note shown with the task is not shown again.
  for (const auto& line : SplitLines(knowledge)) {
    if (line.rfind("### ", 0) == 0) query.exclude_titles.push_back(line.substr(4));
  }
  return knowledge_source->Retrieve(query, "Notes from ksmith's knowledge base on " + about + ":", knowledge_tokens);
}

namespace {

// Best-of-n: independent proposals from the same prompt, several in flight at once. The
// pass@k protocol: nothing one proposal learns reaches another.
class SampleStrategy : public Strategy {
 public:
  explicit SampleStrategy(const StrategyContext& context)
      : max_attempts_(context.max_attempts),
        parallel_(std::max<size_t>(1, context.parallel)),
        overlap_(context.overlap) {
    const PromptContext prompt = context.prompt();
    messages_ = {{"system", BuildSystemPrompt(prompt)},
                 {"user", BuildTaskPrompt(prompt, context.starting_point)}};
  }

  std::string name() const override { return "sample"; }
  bool needs_model() const override { return true; }
  bool ProposesAhead() const override { return overlap_; }

  // Samples are independent, so the next batch is written while earlier ones are judged; no more
  // than a batch waits for its verdicts when a new one is asked for.
  std::vector<Step> Next(const RunState& state) override {
    std::vector<Step> steps;
    const auto pending = std::count_if(state.attempts.begin(), state.attempts.end(), [](const Attempt& a) { return a.pending(); });
    if (static_cast<size_t>(pending) >= parallel_) return steps;
    const size_t made = state.attempts.size();
    const size_t left = made >= max_attempts_ ? 0 : max_attempts_ - made;
    for (size_t i = 0; i < std::min(left, parallel_); ++i) {
      Step step;
      step.messages = messages_;
      steps.push_back(std::move(step));
    }
    return steps;
  }

 private:
  size_t max_attempts_;
  size_t parallel_;
  bool overlap_;
  std::vector<ChatMessage> messages_;
};

}  // namespace

std::unique_ptr<Strategy> MakeSampleStrategy(const StrategyContext& context) {
  return std::make_unique<SampleStrategy>(context);
}

std::vector<std::string> StrategyNames() { return {"refine", "sample", "tune", "evolve", "team"}; }

Result<std::unique_ptr<Strategy>> MakeStrategy(const std::string& name, const StrategyContext& context) {
  if (name == "sample") return MakeSampleStrategy(context);
  if (name == "refine") return MakeRefineStrategy(context);
  if (name == "tune") return MakeTuneStrategy(context);
  if (name == "evolve") return MakeEvolveStrategy(context);
  if (name == "team") return MakeTeamStrategy(context);
  return MakeError(ErrorKind::kInvalidArgument, "unknown strategy '{}': choose refine, sample, tune, evolve or team", name);
}

}  // namespace ksmith
