// Running one build's command (the CPU compiler, nvcc, a KernelBench build sandbox) the same way
// for every backend: under its limits, for the wall-clock time they allow, with the work folder's
// path taken out of what it said, and the limit that stopped it named.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "compile/build.h"
#include "core/result.h"
#include "core/subprocess.h"

namespace ksmith {

struct BuildRun {
  /// Its output has no "`work`/" left in it and, where a limit stopped it, ends with "[reason]".
  ProcessExit exit;
  std::optional<BuildLimitHit> limit_hit;
};

/// Runs `options` (whose `limits` the caller sets: BuildLimits::ForChild, or a build sandbox's)
/// for limits.WallTimeout(at_least). `compiler` names what ran in a limit's reason.
Result<BuildRun> RunBuildCommand(const SpawnOptions& options, const BuildLimits& limits, std::chrono::seconds at_least,
                                 const std::filesystem::path& work, const std::string& compiler);

}  // namespace ksmith
