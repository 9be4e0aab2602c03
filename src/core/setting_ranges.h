// The one rule for each numeric setting, whether it comes as a flag, from ksmith.toml or in a
// request to `ksmith serve`, with one message: "must be an integer from 1 to 100000, got -3".
#pragma once

#include <string>
#include <string_view>

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

/// A range's bound as people write it: 3600000, not 3.6e+06; 0.05 as it is.
std::string SettingNumberText(double value);

}  // namespace ksmith
