// The benchmark's metrics (issue 5), as pure functions of per-sample outcomes so that they can be
// checked against hand-computed cases. Samples of one task are the n candidates a strategy made
// for it; a failing candidate has no speedup.
//
// - pass@k: the unbiased estimator of Chen et al. (2021), 1 - C(n-c, k) / C(n, k), for c correct
//   of n samples.
// - speedup@k and efficiency@k: the expected best value among k samples drawn without replacement
//   from the n, a failing sample counting 0 (a wrong kernel is worth nothing, however fast). With
//   values sorted ascending v(1) <= ... <= v(n), E[max of k] = sum_i v(i) C(i-1, k-1) / C(n, k):
//   unbiased, like pass@k, and equal to it when every correct value is 1.
//   efficiency is the fraction of the device's measured roofline a kernel reaches.
// - fast_p: the share of tasks whose best correct kernel is faster than p times the baseline,
//   where "faster" means the speedup's 95% interval clears p (its low end is above p): a tie inside
//   the noise is not a win. fast_0 is the share of tasks with any correct kernel.
// - geometric-mean speedup over the tasks that have a correct kernel, with a percentile bootstrap
//   interval over the tasks and, within each, over its speedup's own 95% interval (a split
//   normal in log space): with one task the suite's interval is that task's, not a point.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ksmith {

/// One evaluated candidate, as the metrics need it.
struct SampleOutcome {
  bool compiled = false;
  bool correct = false;                  // status passed
  std::optional<double> speedup;         // median, when timed
  std::optional<double> speedup_low;     // the 95% interval's low end
  std::optional<double> roofline_fraction;
  std::optional<double> speedup_high;    // the 95% interval's high end
  /// False: its timing did not hold the device alone (a verdict's `timing.alone`), so it has no
  /// speedup or roofline fraction here: a speedup timed beside other work is not compared.
  bool timed_alone = true;
};

/// 1 - C(n-c, k) / C(n, k); requires 0 <= c <= n and 1 <= k <= n.
double PassAtK(int64_t n, int64_t c, int64_t k);

/// E[max over a k-subset] of `values` (failed samples as 0); requires 1 <= k <= values.size().
double ExpectedMaxAtK(std::vector<double> values, int64_t k);

struct TaskMetrics {
  int64_t samples = 0;
  double compile_rate = 0;
  double correct_rate = 0;
  std::vector<double> pass_at_k;        // index k-1, for k = 1..samples
  std::vector<double> speedup_at_k;     // index k-1
  std::vector<double> efficiency_at_k;  // index k-1
  std::optional<double> best_speedup;   // of the best correct sample, by its median
  std::optional<double> best_speedup_low;   // the best sample's 95% interval
  std::optional<double> best_speedup_high;
  std::optional<double> best_roofline_fraction;
  int64_t timed_not_alone = 0;  // correct samples timed beside other work, their speedups left out
};

TaskMetrics ComputeTaskMetrics(const std::vector<SampleOutcome>& samples);

/// The share of tasks whose best correct kernel clears `p` (see above).
double FastP(const std::vector<TaskMetrics>& tasks, double p);

struct GeomeanEstimate {
  double value = 0;
  double low = 0;   // 95% percentile bootstrap interval
  double high = 0;
  int64_t tasks = 0;  // how many tasks had a correct kernel (and so count)
};

/// Geometric mean of the best speedups, with `resamples` bootstrap resamples drawn with `seed`.
std::optional<GeomeanEstimate> GeomeanSpeedup(const std::vector<TaskMetrics>& tasks, int resamples = 2000,
                                              uint64_t seed = 1);

}  // namespace ksmith
