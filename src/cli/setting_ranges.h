// The one rule for each numeric setting of `ksmith optimize` and `ksmith bench`, whether it
// comes as a flag or from ksmith.toml, with one message: "must be an integer from 1 to 100000,
// got -3".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace ksmith {

struct SettingRange {
  double min = 0;
  double max = 0;
  bool integer = false;
};

/// The range of a setting by its ksmith.toml key ("max_candidates", "timing_budget_s"); null for
/// a key that is not numeric.
const SettingRange* RangeOf(std::string_view key);

/// "" when `text` is a value the range allows; otherwise "must be an integer from 1 to 100000,
/// got -3".
std::string CheckRange(const SettingRange& range, const std::string& text);

/// The same check for a flag: `app.add_option(...)->check(RangeCheck("max_candidates"))`.
CLI::Validator RangeCheck(std::string_view key);

/// `--build-memory-gib` and `--build-cpu-s`, the limits of each build (backend/build.h), as the
/// commands that evaluate declare them.
void AddBuildLimitOptions(CLI::App& app, std::optional<double>& memory_gib, std::optional<double>& cpu_s);

}  // namespace ksmith
