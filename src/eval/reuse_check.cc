#include "eval/reuse_check.h"

#include <algorithm>

#include <fmt/format.h>

#include "eval/statistics.h"

namespace ksmith {
namespace {

constexpr size_t kMinReuseSamples = 3;

}  // namespace

double ReusedMedianUs(const ReuseTimes& times) {
  return times.reused_us.empty() ? 0 : MedianWithInterval(times.reused_us).median;
}

std::optional<std::string> JudgeReuse(const ReuseTimes& candidate, const ReuseTimes& baseline) {
  if (candidate.reused_us.size() < kMinReuseSamples || baseline.reused_us.size() < kMinReuseSamples) {
    return std::nullopt;
  }
  const double candidate_reused = ReusedMedianUs(candidate);
  const double baseline_reused = ReusedMedianUs(baseline);
  if (candidate_reused <= 0 || baseline_reused <= 0) return std::nullopt;
  const double candidate_ratio = candidate.fresh_us / candidate_reused;
  const double baseline_ratio = baseline.fresh_us / baseline_reused;
  if (candidate_ratio <= kReuseSpeedupLimit * std::max(1.0, baseline_ratio)) return std::nullopt;
  return fmt::format(
      "it ran {:.1f}x faster on inputs that barely changed since it last saw them ({:.2f} us) than on fresh "
      "inputs ({:.2f} us), where the baseline ran {:.2f}x: it skips work it did on earlier calls",
      candidate_ratio, candidate_reused, candidate.fresh_us, baseline_ratio);
}

}  // namespace ksmith
