// Robust summaries of timing samples: medians with distribution-free confidence intervals.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith {

struct Estimate {
  double median = 0;
  double low = 0;   // 95% confidence interval of the median
  double high = 0;
  size_t samples = 0;
  // What KernelBench's runtime_stats report (get_timing_stats: mean, std, min, max of its trials),
  // so its analysis can read ksmith's; the verdict rests on the median and its interval.
  double mean = 0;
  double stddev = 0;  // the population standard deviation, numpy's default, as KernelBench's
  double min = 0;
  double max = 0;

  nlohmann::json ToJson() const;
  /// As ToJson wrote it; a missing or null field reads as 0 (NaN is stored as null).
  static Estimate FromJson(const nlohmann::json& json);
};

/// Median and its 95% interval from order statistics (normal approximation to the binomial);
/// with fewer than 6 samples the interval is the sample range. Also the samples' mean, standard
/// deviation and range.
Estimate MedianWithInterval(std::vector<double> samples);

/// Candidate and baseline were timed in pairs, one pair per round: the speedup is the median of
/// baseline_i / candidate_i, which cancels drift that affects both sides of a round.
Estimate PairedSpeedup(const std::vector<double>& baseline, const std::vector<double>& candidate);

/// Whether a paired speedup already answers what a verdict asks: its 95% interval is clear of 1
/// (faster, or slower) or lies inside 1 +- tie_band (a tie), so more rounds would only narrow it.
/// Never with tie_band 0 or without an estimate. Shared by the CPU and GPU timing loops.
bool ComparisonDecided(const Estimate& speedup, double tie_band);

}  // namespace ksmith
