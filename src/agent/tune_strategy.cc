// The search-only tuner: no model, only the knobs a kernel declares (`// @tune`). Every setting
// is a complete candidate evaluated like any other, so a setting that fails to build or verify is
// recorded with its verdict and skipped; the best passing one wins.
#include <algorithm>
#include <set>

#include "agent/strategy.h"

namespace ksmith {
namespace {

class TuneStrategy : public Strategy {
 public:
  TuneStrategy(std::string source, std::vector<KnobSetting> settings, size_t batch)
      : source_(std::move(source)), settings_(std::move(settings)), batch_(std::max<size_t>(1, batch)) {}

  std::string name() const override { return "tune"; }
  bool needs_model() const override { return false; }

  std::optional<size_t> Capacity() const override { return settings_.size(); }

  std::vector<Step> Next(const RunState& state) override {
    // The settings already tried are read from the run, so a resumed tune skips them. No
    // setting depends on another's verdict, so a batch of them is evaluated side by side.
    std::set<std::string> tried;
    for (const auto& attempt : state.attempts) tried.insert(attempt.knobs.dump());
    std::vector<Step> steps;
    for (const auto& setting : settings_) {
      if (steps.size() == batch_) break;
      if (tried.count(KnobsToJson(setting).dump()) != 0) continue;
      Step step;
      step.role.clear();
      step.origin = "tune";
      step.source = ApplyKnobs(source_, setting);
      step.knobs = setting;
      steps.push_back(std::move(step));
    }
    return steps;
  }

 private:
  std::string source_;
  std::vector<KnobSetting> settings_;
  size_t batch_;
};

}  // namespace

Result<std::unique_ptr<Strategy>> MakeTuneStrategy(const StrategyContext& context) {
  auto knobs = ParseTuneKnobs(context.tune_source);
  if (!knobs.ok()) return MakeError(ErrorKind::kInvalidArgument, "tune: {}", knobs.error().message);
  if (knobs->empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "tune: the kernel declares no knobs (add lines like `// @tune BLOCK: 64, 128, 256` "
                     "with an #ifndef BLOCK default, see docs/design.md)");
  }
  auto settings = EnumerateSettings(*knobs, context.max_attempts, context.seed);
  return std::unique_ptr<Strategy>(std::make_unique<TuneStrategy>(context.tune_source, std::move(settings), context.parallel));
}

}  // namespace ksmith
