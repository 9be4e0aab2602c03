#include "bench/metrics.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <random>

namespace ksmith {

double PassAtK(int64_t n, int64_t c, int64_t k) {
  assert(n >= 1 && c >= 0 && c <= n && k >= 1 && k <= n);
  if (n - c < k) return 1.0;
  // C(n-c, k) / C(n, k) as a product, which neither overflows nor loses precision.
  double all_fail = 1.0;
  for (int64_t i = n - c + 1; i <= n; ++i) all_fail *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  return 1.0 - all_fail;
}

double ExpectedMaxAtK(std::vector<double> values, int64_t k) {
  const auto n = static_cast<int64_t>(values.size());
  assert(k >= 1 && k <= n);
  std::sort(values.begin(), values.end());
  // weight(i) = C(i-1, k-1) / C(n, k) for the i-th smallest (1-based); zero below i = k. Built up
  // as a ratio: weight(i+1) = weight(i) * i / (i - k + 1), starting from weight(k) = 1 / C(n, k).
  double weight = 1.0;
  for (int64_t j = 0; j < k; ++j) weight *= static_cast<double>(k - j) / static_cast<double>(n - j);
  double expected = 0;
  for (int64_t i = k; i <= n; ++i) {
    expected += weight * values[static_cast<size_t>(i - 1)];
    if (i < n) weight *= static_cast<double>(i) / static_cast<double>(i - k + 1);
  }
  return expected;
}

TaskMetrics ComputeTaskMetrics(const std::vector<SampleOutcome>& samples) {
  TaskMetrics metrics;
  metrics.samples = static_cast<int64_t>(samples.size());
  if (samples.empty()) return metrics;
  int64_t compiled = 0, correct = 0;
  std::vector<double> speedups, efficiencies;
  const SampleOutcome* best = nullptr;
  for (const auto& sample : samples) {
    compiled += sample.compiled ? 1 : 0;
    correct += sample.correct ? 1 : 0;
    metrics.timed_not_alone += sample.correct && !sample.timed_alone ? 1 : 0;
    speedups.push_back(sample.correct ? sample.speedup.value_or(0) : 0);
    efficiencies.push_back(sample.correct ? sample.roofline_fraction.value_or(0) : 0);
    if (sample.correct && sample.speedup && (best == nullptr || *sample.speedup > *best->speedup)) best = &sample;
  }
  const double n = static_cast<double>(samples.size());
  metrics.compile_rate = static_cast<double>(compiled) / n;
  metrics.correct_rate = static_cast<double>(correct) / n;
  for (int64_t k = 1; k <= metrics.samples; ++k) {
    metrics.pass_at_k.push_back(PassAtK(metrics.samples, correct, k));
    metrics.speedup_at_k.push_back(ExpectedMaxAtK(speedups, k));
    metrics.efficiency_at_k.push_back(ExpectedMaxAtK(efficiencies, k));
  }
  if (best != nullptr) {
    metrics.best_speedup = best->speedup;
    metrics.best_speedup_low = best->speedup_low;
    metrics.best_speedup_high = best->speedup_high;
    metrics.best_roofline_fraction = best->roofline_fraction;
  }
  return metrics;
}

double FastP(const std::vector<TaskMetrics>& tasks, double p) {
  if (tasks.empty()) return 0;
  int64_t wins = 0;
  for (const auto& task : tasks) {
    if (p <= 0) {
      wins += task.correct_rate > 0 ? 1 : 0;
    } else if (task.best_speedup_low && *task.best_speedup_low > p) {
      ++wins;
    }
  }
  return static_cast<double>(wins) / static_cast<double>(tasks.size());
}

namespace {

// A task's log speedup with its own uncertainty: the verdict's 95% interval, read as a normal
// distribution in log space on each side of the median (a split normal, since speedup intervals
// are not symmetric). The raw timing samples are not kept beside a bench run; the verdict's
// interval is their bootstrap, so drawing from it resamples them in effect.
struct TaskLog {
  double median = 0;
  double sigma_below = 0;
  double sigma_above = 0;
};

constexpr double kZ95 = 1.959963984540054;

}  // namespace

std::optional<GeomeanEstimate> GeomeanSpeedup(const std::vector<TaskMetrics>& tasks, int resamples, uint64_t seed) {
  std::vector<TaskLog> logs;
  for (const auto& task : tasks) {
    if (!task.best_speedup || *task.best_speedup <= 0) continue;
    TaskLog log{std::log(*task.best_speedup)};
    if (task.best_speedup_low && *task.best_speedup_low > 0) {
      log.sigma_below = std::max(0.0, log.median - std::log(*task.best_speedup_low)) / kZ95;
    }
    if (task.best_speedup_high && *task.best_speedup_high > 0) {
      log.sigma_above = std::max(0.0, std::log(*task.best_speedup_high) - log.median) / kZ95;
    }
    logs.push_back(log);
  }
  if (logs.empty()) return std::nullopt;
  auto mean_exp = [](const std::vector<double>& values) {
    double sum = 0;
    for (double value : values) sum += value;
    return std::exp(sum / static_cast<double>(values.size()));
  };
  GeomeanEstimate estimate;
  std::vector<double> medians;
  for (const auto& log : logs) medians.push_back(log.median);
  estimate.value = mean_exp(medians);
  estimate.tasks = static_cast<int64_t>(logs.size());
  // Two levels, as the uncertainty has two sources: which tasks the suite happens to hold
  // (tasks drawn with replacement) and how well each task's speedup is known (its value drawn
  // from its own interval). With one task, or tasks that agree, the first alone would collapse
  // the interval to a point however noisy each timing was.
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<size_t> pick(0, logs.size() - 1);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> means;
  std::vector<double> resample(logs.size());
  for (int r = 0; r < resamples; ++r) {
    for (auto& value : resample) {
      const TaskLog& log = logs[pick(random)];
      const double z = normal(random);
      value = log.median + z * (z < 0 ? log.sigma_below : log.sigma_above);
    }
    means.push_back(mean_exp(resample));
  }
  std::sort(means.begin(), means.end());
  auto quantile = [&means](double q) {
    const auto index = static_cast<size_t>(q * static_cast<double>(means.size() - 1) + 0.5);
    return means[std::min(index, means.size() - 1)];
  };
  estimate.low = resamples > 0 ? std::min(quantile(0.025), estimate.value) : estimate.value;
  estimate.high = resamples > 0 ? std::max(quantile(0.975), estimate.value) : estimate.value;
  return estimate;
}

}  // namespace ksmith
