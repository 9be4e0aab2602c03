#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "core/files.h"
#include "eval/backend_registry.h"
#include "sandbox/policy.h"
#include "sandbox/protocol.h"
#include "sandbox/supervisor.h"

namespace ksmith {
namespace {

struct DoctorFlags {
  bool json = false;
  bool refresh = false;
};

// The walls a candidate runs in on this machine: a worker applies them to itself and says which
// took effect, as it does before loading a candidate.
nlohmann::json SandboxJson(const std::filesystem::path& cache_directory) {
  ScopedTempDir scratch("doctor-sandbox", cache_directory);
  if (!scratch.ok()) return {{"error", "cannot create a scratch folder under " + cache_directory.string()}};
  auto worker = WorkerProcess::Start({DefaultCpuWorkerExecutable(), scratch.path(), 1, {}, nullptr});
  if (!worker.ok()) return {{"error", worker.error().message}};
  Message probe;
  probe.header = {{"type", "sandbox_probe"}, {"scratch", scratch.path().string()}};
  auto reply = (*worker)->Request(probe, "protections", std::chrono::seconds(20), "probing the sandbox");
  (*worker)->Close(std::chrono::seconds(5));
  if (!reply) return {{"error", "the worker failed: " + (*worker)->failure()->description}};
  return reply->header.value("protections", nlohmann::json::object());
}

std::string SandboxText(const nlohmann::json& sandbox) {
  if (sandbox.contains("error")) return fmt::format("sandbox      could not be probed: {}\n", sandbox["error"].get<std::string>());
  const Protections protections = Protections::FromJson(sandbox);
  std::string text = fmt::format("sandbox      {}\n", protections.Summary());
  for (const auto& note : protections.notes) text += fmt::format("             {}\n", note);
  return text;
}

int RunDoctor(const DoctorFlags& flags) {
  auto context = LoadCpuContext(flags.refresh);
  if (!context.ok()) {
    PrintError(context.error().message);
    return kExitInfra;
  }
  const MachineFacts& machine = context->machine;
  nlohmann::json json = machine.ToJson();
  json["compilers"] = {{"cxx", context->compiler.info().version}};
  json["cache_directory"] = context->cache_directory.string();
  json["worker"] = DefaultCpuWorkerExecutable().string();
  json["sandbox"] = SandboxJson(context->cache_directory);
  // Each backend's part (its compilers, its devices), in the registry's order.
  std::string backends_text;
  for (const auto& name : BackendRegistry::Global().Names()) {
    const auto entry = BackendRegistry::Global().Find(name);
    if (!entry || !entry->doctor) continue;
    DoctorSection section = entry->doctor(context->cache_directory, flags.refresh);
    json.update(section.json, /*merge_objects=*/true);  // "compilers" gains the backend's
    backends_text += section.text;
  }
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
      "compilers    {}\n"
      "cache        {}\n",
      machine.cpu_model, machine.cores, machine.l1d_bytes >> 10, machine.l2_bytes >> 10,
      machine.llc_bytes >> 20, machine.memory_bandwidth_gbs, machine.fp32_gflops,
      machine.measured_at, machine.from_cache ? " (cached; --refresh measures again)" : "",
      context->compiler.info().version, context->cache_directory.string());
  text += SandboxText(json["sandbox"]);
  text += backends_text;
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace

CommandHandler AddDoctorCommand(CLI::App& app) {
  auto flags = std::make_shared<DoctorFlags>();
  app.add_flag("--json", flags->json, "Print JSON");
  app.add_flag("--refresh", flags->refresh, "Measure bandwidth and FLOP rates (CPU and GPU) again instead of using the cache");
  return [flags] { return RunDoctor(*flags); };
}

}  // namespace ksmith
