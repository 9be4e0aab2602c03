#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "core/subprocess.h"
#include "core/strings.h"
#include "sandbox/supervisor.h"

namespace ksmith {
namespace {

struct DoctorFlags {
  bool json = false;
  bool refresh = false;
};

std::string ToolVersion(const std::string& tool) {
  SpawnOptions options;
  options.argv = {tool, "--version"};
  options.inherit_environment = true;
  auto run = RunCommand(options, std::chrono::seconds(20));
  if (!run.ok() || !run->succeeded()) return "not found";
  const auto lines = SplitLines(run->output);
  for (const auto& line : lines) {
    if (line.find("release") != std::string::npos) return std::string(Trim(line));
  }
  return lines.empty() ? "unknown" : std::string(Trim(lines[0]));
}

int RunDoctor(const DoctorFlags& flags) {
  auto context = LoadCpuContext(flags.refresh);
  if (!context.ok()) {
    PrintError(context.error().message);
    return kExitInfra;
  }
  const MachineFacts& machine = context->machine;
  nlohmann::json json = machine.ToJson();
  json["compilers"] = {{"cxx", context->compiler.info().version}, {"nvcc", ToolVersion("nvcc")}};
  json["cache_directory"] = context->cache_directory.string();
  json["worker"] = WorkerProcess::DefaultExecutable().string();
  if (flags.json) {
    std::fputs((json.dump(2) + "\n").c_str(), stdout);
    return kExitOk;
  }
  std::string text = fmt::format(
      "machine      {} ({} cores)\n"
      "caches       L1d {} KiB, L2 {} KiB, last level {} MiB\n"
      "bandwidth    {:.1f} GB/s (measured: best of copy and triad, all cores)\n"
      "fp32 peak    {:.1f} GFLOP/s (measured: FMA throughput, all cores)\n"
      "measured at  {}{}\n"
      "compilers    {}\n             nvcc: {}\n"
      "cache        {}\n",
      machine.cpu_model, machine.cores, machine.l1d_bytes >> 10, machine.l2_bytes >> 10,
      machine.llc_bytes >> 20, machine.memory_bandwidth_gbs, machine.fp32_gflops,
      machine.measured_at, machine.from_cache ? " (cached; --refresh measures again)" : "",
      context->compiler.info().version, json["compilers"]["nvcc"].get<std::string>(),
      context->cache_directory.string());
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace

CommandHandler AddDoctorCommand(CLI::App& app) {
  auto flags = std::make_shared<DoctorFlags>();
  app.add_flag("--json", flags->json, "Print JSON");
  app.add_flag("--refresh", flags->refresh, "Measure bandwidth and FLOP rate again instead of using the cache");
  return [flags] { return RunDoctor(*flags); };
}

}  // namespace ksmith
