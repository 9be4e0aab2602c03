#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/opencl/opencl_compiler.h"
#include "backend/cuda/gpu_facts.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "core/subprocess.h"
#include "core/strings.h"
#include "core/files.h"
#include "sandbox/policy.h"
#include "sandbox/protocol.h"
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

// The GPU part never fails the command: a machine without a GPU (or without the CUDA worker)
// is a normal machine, and doctor says why in one line.
nlohmann::json GpuJson(const Result<GpuFacts>& gpu) {
  if (!gpu.ok()) {
    const std::string& message = gpu.error().message;
    // The loader's words ("libcuda.so.1: cannot open shared object file") are not the reader's.
    std::error_code error;
    std::string reason = message.starts_with("no ") ? message : "no GPU: " + message;
    if (!std::filesystem::exists("/dev/nvidiactl", error)) {
      reason = "no NVIDIA GPU here (/dev/nvidiactl is missing); --backend cuda needs one, --backend cpu runs here";
    } else if (message.find("libcuda.so") != std::string::npos) {
      reason = "no NVIDIA driver found (libcuda.so.1 is not installed); install the driver for --backend cuda";
    }
    return {{"available", false}, {"reason", reason}, {"detail", message}};
  }
  nlohmann::json json = gpu->ToJson();
  json["available"] = true;
  return json;
}

// The walls a candidate runs in on this machine: a worker applies them to itself and says which
// took effect, as it does before loading a candidate.
nlohmann::json SandboxJson(const std::filesystem::path& cache_directory) {
  ScopedTempDir scratch("doctor-sandbox", cache_directory);
  if (!scratch.ok()) return {{"error", "cannot create a scratch folder under " + cache_directory.string()}};
  auto worker = WorkerProcess::Start({WorkerProcess::DefaultExecutable(), scratch.path(), 1, {}, nullptr});
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

std::string GpuText(const Result<GpuFacts>& gpu, const nlohmann::json& gpu_json) {
  if (!gpu.ok()) return fmt::format("gpu          {}\n", gpu_json["reason"].get<std::string>());
  const GpuFacts& facts = *gpu;
  std::string text = fmt::format(
      "gpu          {}, compute {}, {} SMs, {:.1f} GiB, L2 {} MiB\n"
      "             shared memory {} KiB per block ({} KiB without opt-in), {} KiB per SM\n",
      facts.name, facts.compute_capability, facts.sm_count,
      static_cast<double>(facts.memory_bytes) / (1 << 30), facts.l2_bytes >> 20,
      facts.shared_memory_per_block_bytes >> 10, facts.shared_memory_per_block_default_bytes >> 10,
      facts.shared_memory_per_sm_bytes >> 10);
  text += fmt::format(
      "gpu peaks    copy {:.0f} GB/s (theoretical {:.0f}), fp32 {:.1f} TFLOP/s, bf16 tensor {:.0f} "
      "TFLOP/s\n"
      "             measured at {}{}\n",
      facts.copy_bandwidth_gbps, facts.theoretical_bandwidth_gbps, facts.fp32_tflops,
      facts.bf16_tensor_tflops, facts.measured_at,
      facts.from_cache ? " (cached; --refresh measures again)" : "");
  for (const auto& error : facts.probe_errors) text += fmt::format("gpu probe    {}\n", error);
  text += fmt::format("gpu driver   {}, CUDA runtime {}\n", facts.driver_version, facts.runtime_version);
  return text;
}

// The OpenCL platforms and devices the opencl backend can use (ksmith-oclc lists them).
nlohmann::json OpenclJson() {
  auto devices = ListOpenclDevices();
  if (!devices.ok()) return {{"available", false}, {"reason", devices.error().message}};
  if (devices->empty()) {
    return {{"available", false},
            {"reason", "the OpenCL loader found no platform (install pocl-opencl-icd, or register a vendor's library in "
                       "/etc/OpenCL/vendors)"}};
  }
  return {{"available", true}, {"devices", *devices}};
}

std::string OpenclText(const nlohmann::json& opencl) {
  if (!opencl.value("available", false)) return fmt::format("opencl       none: {}\n", opencl.value("reason", std::string()));
  std::string text;
  for (const auto& device : opencl["devices"]) {
    text += fmt::format("opencl       --devices {}: {} ({}, {}, {}; {} compute units, {} MiB)\n", device.value("index", 0),
                        device.value("name", std::string()), device.value("platform", std::string()),
                        device.value("type", std::string()), device.value("version", std::string()),
                        device.value("compute_units", 0), device.value("global_memory_bytes", uint64_t{0}) >> 20);
  }
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
  // nvcc's version and folders (its --dryrun: both CUDA forms build with them), asked once.
  auto nvcc = NvccCompiler::Create(context->cache_directory, CudaTarget{"sm_90", "doctor"});
  json["compilers"] = {{"cxx", context->compiler.info().version},
                       {"nvcc", nvcc.ok() ? nvcc->info().version : ToolVersion("nvcc")},
                       // The NVRTC form's device compiler (backend/cuda/nvrtc_compiler.h).
                       {"nvrtc", ToolVersion(DefaultNvrtcExecutable().string())}};
  if (nvcc.ok()) {
    const ToolkitPaths& paths = nvcc->info().paths;
    json["cuda_toolkit"] = {{"root", nvcc->info().toolkit_root.string()}};
    for (const auto& [name, folders] : {std::pair{"include", &paths.include_dirs},
                                        std::pair{"system_include", &paths.system_include_dirs},
                                        std::pair{"library", &paths.library_dirs}}) {
      json["cuda_toolkit"][name] = nlohmann::json::array();
      for (const auto& folder : *folders) json["cuda_toolkit"][name].push_back(folder.string());
    }
  }
  json["cache_directory"] = context->cache_directory.string();
  json["worker"] = WorkerProcess::DefaultExecutable().string();
  const auto gpu = LoadGpuFacts(DefaultCudaWorkerExecutable(), context->cache_directory, flags.refresh);
  json["gpu"] = GpuJson(gpu);
  json["sandbox"] = SandboxJson(context->cache_directory);
  json["opencl"] = OpenclJson();
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
      "compilers    {}\n             nvcc: {}\n             nvrtc: {}\n"
      "cache        {}\n",
      machine.cpu_model, machine.cores, machine.l1d_bytes >> 10, machine.l2_bytes >> 10,
      machine.llc_bytes >> 20, machine.memory_bandwidth_gbs, machine.fp32_gflops,
      machine.measured_at, machine.from_cache ? " (cached; --refresh measures again)" : "",
      context->compiler.info().version, json["compilers"]["nvcc"].get<std::string>(),
      json["compilers"]["nvrtc"].get<std::string>(),
      context->cache_directory.string());
  if (json.contains("cuda_toolkit")) {
    std::string folders;
    for (const char* name : {"include", "system_include", "library"}) {
      for (const auto& folder : json["cuda_toolkit"][name]) folders += " " + folder.get<std::string>();
    }
    text += fmt::format("cuda toolkit {}, folders:{}\n", json["cuda_toolkit"]["root"].get<std::string>(),
                        folders.empty() ? " none found" : folders);
  }
  text += SandboxText(json["sandbox"]);
  text += GpuText(gpu, json["gpu"]);
  text += OpenclText(json["opencl"]);
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
