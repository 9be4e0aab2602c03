#include "eval/reuse_check.h"

#include <algorithm>

#include <fmt/format.h>

#include "eval/statistics.h"

namespace ksmith {
namespace {

constexpr size_t kMinReuseSamples = 3;
constexpr double kConfirmingShare = 2.0 / 3.0;

double Median(std::vector<double> values) { return MedianWithInterval(std::move(values)).median; }

// Fresh over reused time per pair; empty when the pairs are too few or malformed.
std::vector<double> PairRatios(const ReuseTimes& times) {
  std::vector<double> ratios;
  if (times.pair_fresh_us.size() != times.pair_reused_us.size()) return ratios;
  for (size_t i = 0; i < times.pair_fresh_us.size(); ++i) {
    if (times.pair_reused_us[i] <= 0) return {};
    ratios.push_back(times.pair_fresh_us[i] / times.pair_reused_us[i]);
  }
  return ratios;
}

std::string Describe(double ratio, double reused_us, double fresh_us, double baseline_ratio) {
  return fmt::format(
      "it ran {:.1f}x faster on inputs that barely changed since it last saw them ({:.2f} us) than on fresh "
      "inputs ({:.2f} us), where the baseline ran {:.2f}x: it skips work it did on earlier calls",
      ratio, reused_us, fresh_us, baseline_ratio);
}

}  // namespace

double ReusedMedianUs(const ReuseTimes& times) {
  return times.reused_us.empty() ? 0 : Median(times.reused_us);
}

bool SuspectReuse(const ReuseTimes& candidate, const ReuseTimes& baseline) {
  if (candidate.reused_us.size() < kMinReuseSamples || baseline.reused_us.size() < kMinReuseSamples) return false;
  const double candidate_reused = ReusedMedianUs(candidate);
  const double baseline_reused = ReusedMedianUs(baseline);
  if (candidate_reused <= 0 || baseline_reused <= 0) return false;
  const double baseline_ratio = baseline.fresh_us / baseline_reused;
  return candidate.fresh_us / candidate_reused > kReuseSpeedupLimit * std::max(1.0, baseline_ratio);
}

std::optional<std::string> JudgeReuse(const ReuseTimes& candidate, const ReuseTimes& baseline) {
  if (!SuspectReuse(candidate, baseline)) return std::nullopt;
  const std::vector<double> candidate_ratios = PairRatios(candidate);
  const std::vector<double> baseline_ratios = PairRatios(baseline);
  if (candidate_ratios.size() < kReuseConfirmPairs || baseline_ratios.size() < kReuseConfirmPairs) {
    const double baseline_ratio = baseline.fresh_us / ReusedMedianUs(baseline);
    return Describe(candidate.fresh_us / ReusedMedianUs(candidate), ReusedMedianUs(candidate), candidate.fresh_us,
                    baseline_ratio);
  }
  const double baseline_ratio = Median(baseline_ratios);
  const double limit = kReuseSpeedupLimit * std::max(1.0, baseline_ratio);
  const auto beyond = std::count_if(candidate_ratios.begin(), candidate_ratios.end(),
                                    [&](double ratio) { return ratio > limit; });
  const double ratio = Median(candidate_ratios);
  if (ratio <= limit || static_cast<double>(beyond) < kConfirmingShare * candidate_ratios.size()) return std::nullopt;
  return Describe(ratio, Median(candidate.pair_reused_us), Median(candidate.pair_fresh_us), baseline_ratio) +
         fmt::format(" ({} of {} back-to-back pairs agree)", beyond, candidate_ratios.size());
}

}  // namespace ksmith
