#include "compile/build_command.h"

#include <fmt/format.h>

namespace ksmith {

Result<BuildRun> RunBuildCommand(const SpawnOptions& options, const BuildLimits& limits, std::chrono::seconds at_least,
                                 const std::filesystem::path& work, const std::string& compiler) {
  const auto timeout = limits.WallTimeout(at_least);
  auto run = RunCommand(options, timeout);
  if (!run.ok()) return run.error();
  BuildRun build{std::move(run.value()), std::nullopt};
  // Paths inside the temporary folder mean nothing to the reader.
  std::string& log = build.exit.output;
  const std::string work_prefix = work.string() + "/";
  for (size_t at; (at = log.find(work_prefix)) != std::string::npos;) log.erase(at, work_prefix.size());
  build.limit_hit = FindBuildLimitHit(build.exit, limits, timeout, compiler);
  if (build.limit_hit) log += fmt::format("\n[{}]\n", build.limit_hit->reason);
  return build;
}

}  // namespace ksmith
