#include "cli/setting_ranges.h"

#include <stdexcept>

#include <fmt/format.h>

namespace ksmith {

void AddBuildLimitOptions(CLI::App& app, std::optional<double>& memory_gib, std::optional<double>& cpu_s) {
  app.add_option("--build-memory-gib", memory_gib,
                 "Memory each process of a build may use [GiB] (default 8; fewer builds run at once where the "
                 "machine's memory holds fewer at this limit)")
      ->check(RangeCheck("build_memory_gib"));
  app.add_option("--build-cpu-s", cpu_s, "CPU time each process of a build may use [s] (default 120)")
      ->check(RangeCheck("build_cpu_s"));
}

CLI::Validator RangeCheck(std::string_view key) {
  const SettingRange* range = RangeOf(key);
  if (range == nullptr) throw std::logic_error("no range for setting " + std::string(key));
  const SettingRange copy = *range;
  return CLI::Validator([copy](std::string& text) { return CheckRange(copy, text); },
                        fmt::format("{}..{}", SettingNumberText(copy.min), SettingNumberText(copy.max)));
}

}  // namespace ksmith
