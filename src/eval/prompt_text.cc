#include "eval/prompt_text.h"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace ksmith {

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) value /= 1024, ++unit;
  const bool whole = value >= 10 || value == std::floor(value);
  return fmt::format("{:.{}f} {}", value, whole ? 0 : 1, kUnits[unit]);
}

std::string Rate(double value) {
  if (value >= 100) return fmt::format("{:.0f}", value);
  if (value >= 10) return fmt::format("{:.1f}", value);
  return fmt::format("{:.2f}", value);
}

double FactNumber(const nlohmann::json& facts, const char* key) {
  const auto found = facts.is_object() ? facts.find(key) : facts.end();
  return found != facts.end() && found->is_number() ? found->get<double>() : 0.0;
}

std::string FactText(const nlohmann::json& facts, const char* key) {
  const auto found = facts.is_object() ? facts.find(key) : facts.end();
  return found != facts.end() && found->is_string() ? found->get<std::string>() : std::string();
}

}  // namespace ksmith
