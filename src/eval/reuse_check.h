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
  // Where the samples above point to skipped work, adjacent pairs taken to confirm it: pair i is
  // a call on fresh inputs, then at once the same set with a few elements changed. Load on the
  // machine that comes and goes (which slows a parallel kernel far more than a serial baseline)
  // touches both calls of a pair alike, and cannot make every pair look like skipped work.
  std::vector<double> pair_fresh_us;
  std::vector<double> pair_reused_us;
};

/// Pairs of calls that confirm a suspicion; a backend that takes them needs at least this many.
inline constexpr size_t kReuseConfirmPairs = 15;

/// The median of `reused_us`; 0 when there are none.
double ReusedMedianUs(const ReuseTimes& times);

/// Whether the samples point to skipped work, so that confirming pairs are worth taking. Needs at
/// least 3 samples a side; the baseline's own ratio excuses what the device does to both.
bool SuspectReuse(const ReuseTimes& candidate, const ReuseTimes& baseline);

/// Why the candidate's times show skipped work ("it ran 9.1x faster ..."), or nothing. With
/// confirming pairs on both sides, those decide: the median pair, and at least two in three
/// pairs, must be faster on the barely changed inputs by more than the limit. Without them
/// (a backend on a dedicated device, where load does not come and go), the samples decide.
std::optional<std::string> JudgeReuse(const ReuseTimes& candidate, const ReuseTimes& baseline);

}  // namespace ksmith
