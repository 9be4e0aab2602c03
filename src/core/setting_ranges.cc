#include "core/setting_ranges.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

namespace ksmith {
namespace {

const std::map<std::string, SettingRange, std::less<>>& Ranges() {
  static const auto* ranges = new std::map<std::string, SettingRange, std::less<>>{
      // [optimize] and [eval]
      {"max_candidates", {1, 100000, true}},
      {"islands", {1, 64, true}},
      {"profile_every", {0, 1000, true}},
      {"seeds", {1, 100, true}},
      {"timing_budget_s", {0.05, 600, false}},
      {"timeout_ms", {100, 3'600'000, true}},
      {"build_memory_gib", {0.125, 65536, false}},
      {"build_cpu_s", {1, 86400, false}},
      // flags without a ksmith.toml key
      {"samples", {1, 10000, true}},
      {"jobs", {1, 64, true}},
      {"eval_jobs", {1, 16, true}},
      {"threads", {0, 1024, true}},
      // [llm]
      {"max_concurrency", {1, 64, true}},
      {"temperature", {0, 2, false}},
      {"max_output_tokens", {1, 1'000'000, true}},
      {"context_tokens", {1, 10'000'000, true}},
      {"request_timeout_s", {1, 3600, false}},
      {"request_attempts", {1, 100, true}},
      {"price_input_per_million", {0, 1'000'000, false}},
      {"price_output_per_million", {0, 1'000'000, false}},
      // [budget]
      {"tokens", {1, 1e12, true}},
      {"dollars", {0.0001, 1e9, false}},
      {"wall_s", {1, 1e7, false}},
  };
  return *ranges;
}

}  // namespace

// 3600000, not 3.6e+06; 0.05 as it is.
std::string SettingNumberText(double value) {
  if (value == std::floor(value) && std::abs(value) < 1e15) return fmt::format("{}", static_cast<int64_t>(value));
  return fmt::format("{:g}", value);
}


const SettingRange* RangeOf(std::string_view key) {
  const auto found = Ranges().find(key);
  return found == Ranges().end() ? nullptr : &found->second;
}

std::string CheckRange(const SettingRange& range, const std::string& text) {
  const std::string rule = fmt::format("must be {} from {} to {}", range.integer ? "an integer" : "a number",
                                       SettingNumberText(range.min), SettingNumberText(range.max));
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const bool parsed = !text.empty() && end != nullptr && *end == '\0' && std::isfinite(value);
  if (!parsed || (range.integer && value != std::floor(value))) return fmt::format("{}, got '{}'", rule, text);
  if (value < range.min || value > range.max) return fmt::format("{}, got {}", rule, text);
  return "";
}

}  // namespace ksmith
