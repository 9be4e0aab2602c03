#include "backends/cuda/cuda_tools.h"

#include <chrono>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/gpu_facts.h"
#include "backends/cuda/gpu_reference.h"
#include "backends/cuda/nvcc_compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "core/files.h"
#include "core/strings.h"
#include "core/subprocess.h"

namespace ksmith {
namespace {

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

// Builds each task's GPU reference and runs the cross-check: "skipped: ..." when the task has no
// [cuda] table or this machine cannot (nvcc is this machine's, not the task's).
class CudaReferenceCrossCheck : public ReferenceCrossCheck {
 public:
  explicit CudaReferenceCrossCheck(std::filesystem::path cache_directory)
      : cache_directory_(std::move(cache_directory)), worker_(DefaultCudaWorkerExecutable()), why_not_(WhyNoGpu(worker_)) {}

  std::string WhyNot() const override { return why_not_; }

  std::string Check(const Task& task, KernelEntry cpu_reference) override {
    if (!why_not_.empty()) return "";
    if (!task.cuda) return "skipped: no [cuda] table";
    if (!nvcc_) {
      auto target = ResolveCudaTarget(std::nullopt);
      auto nvcc = target.ok() ? NvccCompiler::Create(cache_directory_, *target) : Result<NvccCompiler>(target.error());
      if (!nvcc.ok()) {
        why_not_ = nvcc.error().message;  // this machine's, not the task's: as without a GPU
        return "";
      }
      nvcc_.emplace(std::move(nvcc.value()));
    }
    const Task view = CudaView(task);
    auto source = ReadFile(view.cuda->reference_source);
    if (!source.ok()) return "failed: " + source.error().message;
    auto build = nvcc_->Build(view, {*source, "reference.cu", KernelRole::kReference, {}});
    if (!build.ok()) return "failed: " + build.error().message;
    if (!build->compiled) return "failed: reference.cu does not compile:\n" + build->log;
    auto agreement = CrossCheckGpuReference(view, cpu_reference, build->shared_object, worker_,
                                            cache_directory_ / "scratch");
    if (!agreement.ok()) return "failed: " + agreement.error().message;
    if (!agreement->disagreement.empty()) return "disagreed: " + agreement->disagreement;
    return "agreed";
  }

 private:
  std::filesystem::path cache_directory_;
  std::filesystem::path worker_;
  std::string why_not_;
  std::optional<NvccCompiler> nvcc_;
};

}  // namespace

DoctorSection CudaDoctor(const std::filesystem::path& cache_directory, bool refresh) {
  DoctorSection section;
  // nvcc's version and folders (its --dryrun: both CUDA forms build with them), asked once.
  auto nvcc = NvccCompiler::Create(cache_directory, CudaTarget{"sm_90", "doctor"});
  section.json["compilers"] = {{"nvcc", nvcc.ok() ? nvcc->info().version : ToolVersion("nvcc")},
                               // The NVRTC form's device compiler (backends/cuda/nvrtc_compiler.h).
                               {"nvrtc", ToolVersion(DefaultNvrtcExecutable().string())}};
  section.text = fmt::format("nvcc         {}\nnvrtc        {}\n", section.json["compilers"]["nvcc"].get<std::string>(),
                             section.json["compilers"]["nvrtc"].get<std::string>());
  if (nvcc.ok()) {
    const ToolkitPaths& paths = nvcc->info().paths;
    nlohmann::json toolkit = {{"root", nvcc->info().toolkit_root.string()}};
    std::string folders;
    for (const auto& [name, list] : {std::pair{"include", &paths.include_dirs},
                                     std::pair{"system_include", &paths.system_include_dirs},
                                     std::pair{"library", &paths.library_dirs}}) {
      toolkit[name] = nlohmann::json::array();
      for (const auto& folder : *list) {
        toolkit[name].push_back(folder.string());
        folders += " " + folder.string();
      }
    }
    section.text += fmt::format("cuda toolkit {}, folders:{}\n", nvcc->info().toolkit_root.string(),
                                folders.empty() ? " none found" : folders);
    section.json["cuda_toolkit"] = std::move(toolkit);
  }
  const auto gpu = LoadGpuFacts(DefaultCudaWorkerExecutable(), cache_directory, refresh);
  section.json["gpu"] = GpuJson(gpu);
  section.text += GpuText(gpu, section.json["gpu"]);
  return section;
}

std::unique_ptr<ReferenceCrossCheck> MakeCudaReferenceCrossCheck(const std::filesystem::path& cache_directory) {
  return std::make_unique<CudaReferenceCrossCheck>(cache_directory);
}

}  // namespace ksmith
