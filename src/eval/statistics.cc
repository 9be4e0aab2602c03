#include "eval/statistics.h"

#include <algorithm>
#include <cmath>

namespace ksmith {
namespace {

constexpr double kZ95 = 1.959964;
constexpr size_t kMinSamplesForInterval = 6;

}  // namespace

nlohmann::json Estimate::ToJson() const {
  return {{"median", median}, {"ci95", {low, high}}, {"samples", samples}};
}

Estimate Estimate::FromJson(const nlohmann::json& json) {
  const auto number = [](const nlohmann::json& value) { return value.is_number() ? value.get<double>() : 0.0; };
  Estimate estimate;
  if (!json.is_object()) return estimate;
  estimate.median = number(json.value("median", nlohmann::json()));
  if (const auto ci = json.value("ci95", nlohmann::json()); ci.is_array() && ci.size() == 2) {
    estimate.low = number(ci[0]);
    estimate.high = number(ci[1]);
  }
  if (const auto samples = json.value("samples", nlohmann::json()); samples.is_number_unsigned()) {
    estimate.samples = samples.get<size_t>();
  }
  return estimate;
}

Estimate MedianWithInterval(std::vector<double> samples) {
  Estimate estimate;
  estimate.samples = samples.size();
  if (samples.empty()) return estimate;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  estimate.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  if (n < kMinSamplesForInterval) {
    estimate.low = samples.front();
    estimate.high = samples.back();
    return estimate;
  }
  const double half_width = kZ95 * std::sqrt(static_cast<double>(n)) / 2.0;
  const double center = static_cast<double>(n) / 2.0;
  const auto low_rank = static_cast<long>(std::floor(center - half_width));
  const auto high_rank = static_cast<long>(std::ceil(center + half_width));
  estimate.low = samples[static_cast<size_t>(std::clamp<long>(low_rank - 1, 0, static_cast<long>(n) - 1))];
  estimate.high = samples[static_cast<size_t>(std::clamp<long>(high_rank - 1, 0, static_cast<long>(n) - 1))];
  return estimate;
}

Estimate PairedSpeedup(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  std::vector<double> ratios;
  const size_t n = std::min(baseline.size(), candidate.size());
  for (size_t i = 0; i < n; ++i) {
    if (candidate[i] > 0) ratios.push_back(baseline[i] / candidate[i]);
  }
  return MedianWithInterval(std::move(ratios));
}

}  // namespace ksmith
