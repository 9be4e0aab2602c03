// The numeric settings' ranges (core/setting_ranges.h) as the commands' flags check them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "core/setting_ranges.h"

namespace ksmith {

/// The same check for a flag: `app.add_option(...)->check(RangeCheck("max_candidates"))`.
CLI::Validator RangeCheck(std::string_view key);

/// `--build-memory-gib` and `--build-cpu-s`, the limits of each build (compile/build.h), as the
/// commands that evaluate declare them.
void AddBuildLimitOptions(CLI::App& app, std::optional<double>& memory_gib, std::optional<double>& cpu_s);

}  // namespace ksmith
