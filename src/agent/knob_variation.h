// Variation of `@tune` knob settings for evolve's non-model proposer: the mutation and crossover
// a model performs on kernels, performed on settings of a kernel's declared knobs, so that the
// search machinery runs (and is measured) without a model.
#pragma once

#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/tune_knobs.h"

namespace ksmith {

class KnobSpace {
 public:
  explicit KnobSpace(std::vector<TuneKnob> knobs) : knobs_(std::move(knobs)) {}

  const std::vector<TuneKnob>& knobs() const { return knobs_; }
  /// Every knob at the value the source's own #define gives.
  KnobSetting Defaults() const;
  /// The setting a candidate's stored knobs ({"BLOCK": "128"}) name; null when they name another
  /// space's knobs or values (a candidate of another kernel).
  std::optional<KnobSetting> FromJson(const nlohmann::json& knobs) const;
  /// `parent` with one knob moved: to a neighbouring value (the values are listed in an order a
  /// person chose, usually by size) most of the time, else to any other.
  KnobSetting Mutate(const KnobSetting& parent, std::mt19937_64& rng) const;
  /// Each knob's value from one of the two parents, chosen at random.
  KnobSetting Cross(const KnobSetting& a, const KnobSetting& b, std::mt19937_64& rng) const;
  KnobSetting Random(std::mt19937_64& rng) const;
  /// A setting not in `tried` (KnobsToJson(...).dump() keys): `proposed` if it is new, else
  /// mutations of it, else random draws; null when none was found (the space is nearly spent).
  std::optional<KnobSetting> Untried(const KnobSetting& proposed, const std::set<std::string>& tried,
                                     std::mt19937_64& rng) const;

 private:
  std::vector<TuneKnob> knobs_;
};

}  // namespace ksmith
