#include "agent/elite_archive.h"

#include <algorithm>

#include <fmt/format.h>

namespace ksmith {

bool EliteArchive::Offer(const Attempt& attempt, size_t attempt_index) {
  if (!attempt.passed() || !attempt.speedup || !attempt.verdict || attempt.repeat_of) return false;
  Elite elite;
  elite.attempt_index = attempt_index;
  elite.number = attempt.number;
  elite.speedup = *attempt.speedup;
  elite.features = FeaturesOf(*attempt.verdict);
  return Offer(elite);
}

bool EliteArchive::Offer(const Elite& elite) {
  const std::string cell = elite.features.Cell();
  const auto found = cells_.find(cell);
  if (found != cells_.end()) {
    if (found->second.number == elite.number || elite.speedup <= found->second.speedup) return false;
    found->second = elite;
    return true;
  }
  cells_.emplace(cell, elite);
  return true;
}

const Elite* EliteArchive::Best() const {
  const Elite* best = nullptr;
  for (const auto& [cell, elite] : cells_) {
    if (best == nullptr || elite.speedup > best->speedup) best = &elite;
  }
  return best;
}

std::vector<const Elite*> EliteArchive::Ranked() const {
  std::vector<const Elite*> ranked;
  for (const auto& [cell, elite] : cells_) ranked.push_back(&elite);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Elite* a, const Elite* b) { return a->speedup > b->speedup; });
  return ranked;
}

nlohmann::json EliteArchive::ToJson() const {
  nlohmann::json cells = nlohmann::json::array();
  for (const Elite* elite : Ranked()) {
    cells.push_back({{"cell", elite->features.Cell()},
                     {"candidate", elite->number},
                     {"speedup", elite->speedup},
                     {"features", elite->features.ToJson()}});
  }
  return cells;
}

bool HasSearchPlacements(const RunState& state) {
  return std::any_of(state.attempts.begin(), state.attempts.end(),
                     [](const Attempt& attempt) { return !DescribePlacement(attempt.search).empty(); });
}

EliteArchive ArchiveOf(const RunState& state) {
  EliteArchive archive;
  for (size_t i = 0; i < state.attempts.size(); ++i) archive.Offer(state.attempts[i], i);
  return archive;
}

std::string DescribePlacement(const nlohmann::json& search) {
  if (!search.is_object() || !search.contains("operator")) return "";
  std::string text;
  if (search.contains("generation")) text += fmt::format("generation {}, ", search["generation"].dump());
  if (search.contains("island")) text += fmt::format("island {}, ", search["island"].dump());
  const std::string op = search["operator"].is_string() ? search["operator"].get<std::string>() : "?";
  text += op;
  const auto parents = search.find("parents");
  if (parents != search.end() && parents->is_array() && !parents->empty()) {
    std::vector<std::string> numbers;
    for (const auto& parent : *parents) numbers.push_back(parent.dump());
    std::string joined;
    for (size_t i = 0; i < numbers.size(); ++i) {
      joined += (i == 0 ? "" : i + 1 == numbers.size() ? " and " : ", ") + numbers[i];
    }
    text += (op == "contrastive" ? " over " : " of ") + joined;
  }
  if (const auto idea = search.find("hypothesis"); idea != search.end() && idea->is_string()) {
    text += fmt::format(", idea \"{}\"", idea->get<std::string>());
  }
  return text;
}

std::vector<std::string> WhyFaster(const Attempt& first, const Attempt& best) {
  std::vector<std::string> reasons;
  if (first.number == best.number || !first.verdict || !best.verdict) return reasons;
  if (first.knobs.is_object() && best.knobs.is_object()) {
    for (const auto& [name, value] : best.knobs.items()) {
      const auto before = first.knobs.find(name);
      if (before != first.knobs.end() && *before != value) {
        reasons.push_back(fmt::format("knob {}: {} -> {}", name, before->get<std::string>(), value.get<std::string>()));
      }
    }
  }
  const KernelFeatures was = FeaturesOf(*first.verdict), is = FeaturesOf(*best.verdict);
  auto changed = [&reasons](const char* what, const std::string& before, const std::string& after) {
    if (before != after) reasons.push_back(fmt::format("{}: {} -> {}", what, before, after));
  };
  auto bits = [](int value) { return value < 0 ? std::string("unknown") : value == 0 ? std::string("scalar") : fmt::format("{}-bit", value); };
  auto flag = [](const std::optional<bool>& value, const char* yes, const char* no) {
    return !value ? std::string("unknown") : std::string(*value ? yes : no);
  };
  changed("vector arithmetic", bits(was.vector_bits), bits(is.vector_bits));
  changed("loads", bits(was.load_bits), bits(is.load_bits));
  changed("threads", flag(was.threads, "OpenMP team", "one thread"), flag(is.threads, "OpenMP team", "one thread"));
  changed("vector precision", flag(was.fp64, "fp64", "fp32"), flag(is.fp64, "fp64", "fp32"));
  changed("shared memory", flag(was.shared_memory, "yes", "no"), flag(is.shared_memory, "yes", "no"));
  changed("tensor cores", flag(was.tensor_cores, "yes", "no"), flag(is.tensor_cores, "yes", "no"));
  changed("registers per thread", was.registers_band < 0 ? "unknown" : fmt::format("<= {}", was.registers_band),
          is.registers_band < 0 ? "unknown" : fmt::format("<= {}", is.registers_band));
  if (first.verdict->timing && best.verdict->timing) {
    const Timing& before = *first.verdict->timing;
    const Timing& after = *best.verdict->timing;
    reasons.push_back(fmt::format("time: {:.1f} us -> {:.1f} us; {}-bound limit reached: {:.0f}% -> {:.0f}%",
                                  before.candidate_us.median, after.candidate_us.median, after.bound_by,
                                  before.roofline_fraction * 100, after.roofline_fraction * 100));
  }
  return reasons;
}

}  // namespace ksmith
