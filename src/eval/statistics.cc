#include "eval/statistics.h"

#include <algorithm>
#include <cmath>

namespace ksmith {
namespace {

constexpr double kZ95 = 1.959964;
constexpr size_t kMinSamplesForInterval = 6;

}  // namespace

nlohmann::json Estimate::ToJson() const {
  nlohmann::json json = {{"median", median}, {"ci95", {low, high}}, {"samples", samples}};
  if (samples > 0) json.update({{"mean", mean}, {"std", stddev}, {"min", min}, {"max", max}});
  return json;
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
  // Missing in verdicts written before they were recorded: 0, like every other missing field.
  estimate.mean = number(json.value("mean", nlohmann::json()));
  estimate.stddev = number(json.value("std", nlohmann::json()));
  estimate.min = number(json.value("min", nlohmann::json()));
  estimate.max = number(json.value("max", nlohmann::json()));
  return estimate;
}

Estimate MedianWithInterval(std::vector<double> samples) {
  Estimate estimate;
  estimate.samples = samples.size();
  if (samples.empty()) return estimate;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  double sum = 0;
  for (double sample : samples) sum += sample;
  estimate.mean = sum / static_cast<double>(n);
  double squares = 0;
  for (double sample : samples) squares += (sample - estimate.mean) * (sample - estimate.mean);
  estimate.stddev = std::sqrt(squares / static_cast<double>(n));
  estimate.min = samples.front();
  estimate.max = samples.back();
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

bool ComparisonDecided(const Estimate& speedup, double tie_band) {
  if (tie_band <= 0 || speedup.median <= 0) return false;
  return speedup.low > 1 || speedup.high < 1 || (speedup.low >= 1 - tie_band && speedup.high <= 1 + tie_band);
}

}  // namespace ksmith
