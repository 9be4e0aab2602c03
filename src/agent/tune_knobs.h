// Knobs declared in a kernel's source (docs/design.md): `// @tune NAME: v1, v2, v3` followed by an
// `#ifndef NAME / #define NAME default / #endif` guard. The tuner, a person and a model all read
// the same declaration; a configuration is applied by defining the knobs ahead of the source.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

struct TuneKnob {
  std::string name;                 // a C identifier
  std::vector<std::string> values;  // as written, in order
  size_t line = 0;                  // 1-based, for messages
  // Into values: the one the source's own `#define NAME x` gives, else 0 (the first listed).
  size_t default_index = 0;
};

/// One value per knob, in declaration order.
using KnobSetting = std::vector<std::pair<std::string, std::string>>;

/// Every @tune declaration. A malformed one (no colon, no values, a bad name or value, a duplicate
/// knob or value, a `#define NAME` without its `#ifndef NAME` guard) is a kParse error naming its
/// line. A source with no knobs gives an empty list.
Result<std::vector<TuneKnob>> ParseTuneKnobs(std::string_view source);

/// `source` with `#define NAME value` lines for the setting placed before its first line, under a
/// comment saying they came from the tuner, so the result is a self-contained candidate.
std::string ApplyKnobs(std::string_view source, const KnobSetting& setting);

/// The number of configurations (saturating at SIZE_MAX).
size_t CountSettings(const std::vector<TuneKnob>& knobs);

/// Up to `limit` distinct settings: all of them in order when they fit (the first knob varying
/// slowest), else the defaults (each knob's default_index) followed by a random sample drawn with
/// `seed`. Deterministic for a seed on every platform. No knobs: one empty setting.
std::vector<KnobSetting> EnumerateSettings(const std::vector<TuneKnob>& knobs, size_t limit, uint64_t seed);

/// A uniform draw in [0, bound), bound > 0, that is the same on every standard library (unlike
/// std::uniform_int_distribution): searches seeded alike make the same choices everywhere.
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t bound);

/// "BLOCK=128 UNROLL=4"
std::string FormatSetting(const KnobSetting& setting);

/// {"BLOCK": "128", "UNROLL": "4"}: how the store keeps a setting (and compares settings tried).
nlohmann::json KnobsToJson(const KnobSetting& setting);

}  // namespace ksmith
