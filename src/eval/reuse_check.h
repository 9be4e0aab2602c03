// Work skipped when inputs barely change. Timed rounds run on inputs no earlier call saw; a few
// more samples run on inputs that differ from the call before in a few elements. An honest
// kernel takes as long on both; one that remembers earlier inputs or outputs (keyed by pointer,
// shape, a hash or a sample of the content) and redoes only what changed is faster on the second.
// Both backends judge their samples here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ksmith {

/// How much faster than on fresh inputs a candidate may run on barely changed ones, beyond what
/// the baseline shows: far above timing noise, far below what skipping work gains.
inline constexpr double kReuseSpeedupLimit = 1.5;

struct ReuseTimes {
  double fresh_us = 0;               // the timed median, on fresh inputs
  std::vector<double> reused_us;     // samples on barely changed inputs
};

/// The median of `reused_us`; 0 when there are none.
double ReusedMedianUs(const ReuseTimes& times);

/// Why the candidate's times show skipped work ("it ran 9.1x faster ..."), or nothing. Needs at
/// least 3 samples a side; the baseline's own ratio excuses what the device does to both.
std::optional<std::string> JudgeReuse(const ReuseTimes& candidate, const ReuseTimes& baseline);

}  // namespace ksmith
