#include "agent/knob_variation.h"

namespace ksmith {
namespace {

constexpr int kAttemptsForUntried = 64;
constexpr size_t kEnumerableSettings = 4096;

size_t IndexOf(const TuneKnob& knob, const std::string& value) {
  for (size_t i = 0; i < knob.values.size(); ++i) {
    if (knob.values[i] == value) return i;
  }
  return 0;
}

}  // namespace

KnobSetting KnobSpace::Defaults() const {
  KnobSetting setting;
  for (const auto& knob : knobs_) setting.emplace_back(knob.name, knob.values[knob.default_index]);
  return setting;
}

std::optional<KnobSetting> KnobSpace::FromJson(const nlohmann::json& knobs) const {
  if (!knobs.is_object() || knobs.size() != knobs_.size()) return std::nullopt;
  KnobSetting setting;
  for (const auto& knob : knobs_) {
    const auto found = knobs.find(knob.name);
    if (found == knobs.end() || !found->is_string()) return std::nullopt;
    const std::string value = found->get<std::string>();
    bool known = false;
    for (const auto& listed : knob.values) known = known || listed == value;
    if (!known) return std::nullopt;
    setting.emplace_back(knob.name, value);
  }
  return setting;
}

KnobSetting KnobSpace::Mutate(const KnobSetting& parent, std::mt19937_64& rng) const {
  std::vector<size_t> movable;
  for (size_t i = 0; i < knobs_.size(); ++i) {
    if (knobs_[i].values.size() > 1) movable.push_back(i);
  }
  KnobSetting child = parent;
  if (movable.empty()) return child;
  const size_t which = movable[UniformBelow(rng, movable.size())];
  const TuneKnob& knob = knobs_[which];
  const size_t count = knob.values.size();
  const size_t current = IndexOf(knob, parent[which].second);
  size_t next = current;
  if (UniformBelow(rng, 10) < 7) {
    // A neighbour: one step up or down the list, turning back at its ends.
    const bool up = UniformBelow(rng, 2) == 0;
    next = up ? (current + 1 < count ? current + 1 : current - 1) : (current > 0 ? current - 1 : current + 1);
  } else {
    next = (current + 1 + UniformBelow(rng, count - 1)) % count;
  }
  child[which].second = knob.values[next];
  return child;
}

KnobSetting KnobSpace::Cross(const KnobSetting& a, const KnobSetting& b, std::mt19937_64& rng) const {
  KnobSetting child = a;
  for (size_t i = 0; i < child.size() && i < b.size(); ++i) {
    if (UniformBelow(rng, 2) == 1) child[i].second = b[i].second;
  }
  return child;
}

KnobSetting KnobSpace::Random(std::mt19937_64& rng) const {
  KnobSetting setting;
  for (const auto& knob : knobs_) setting.emplace_back(knob.name, knob.values[UniformBelow(rng, knob.values.size())]);
  return setting;
}

std::optional<KnobSetting> KnobSpace::Untried(const KnobSetting& proposed, const std::set<std::string>& tried,
                                              std::mt19937_64& rng) const {
  auto is_new = [&tried](const KnobSetting& setting) { return tried.count(KnobsToJson(setting).dump()) == 0; };
  if (is_new(proposed)) return proposed;
  KnobSetting walk = proposed;
  for (int i = 0; i < kAttemptsForUntried; ++i) {
    walk = Mutate(walk, rng);
    if (is_new(walk)) return walk;
  }
  for (int i = 0; i < kAttemptsForUntried; ++i) {
    KnobSetting drawn = Random(rng);
    if (is_new(drawn)) return drawn;
  }
  // In a small space the draws may miss the last few settings, which enumeration finds.
  if (const size_t count = CountSettings(knobs_); count <= kEnumerableSettings) {
    for (const auto& setting : EnumerateSettings(knobs_, count, 0)) {
      if (is_new(setting)) return setting;
    }
  }
  return std::nullopt;
}

}  // namespace ksmith
