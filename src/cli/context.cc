#include "cli/context.h"

#include <future>

#include "backend/cuda/nvcc_compiler.h"
#include "cli/commands.h"
#include "core/files.h"
#include "task/task.h"

namespace ksmith {

Result<CpuContext> LoadCpuContext(bool refresh_machine) {
  auto cache = CacheDirectory();
  if (!cache.ok()) return cache.error();
  auto compiler = CpuCompiler::Create(*cache);
  if (!compiler.ok()) return compiler.error();
  auto machine = LoadMachineFacts(*compiler, *cache, refresh_machine);
  if (!machine.ok()) return machine.error();
  return CpuContext{*cache, std::move(compiler.value()), std::move(machine.value())};
}

Result<CudaContext> LoadCudaContext(const Task& task, const std::string& arch) {
  const auto worker = DefaultCudaWorkerExecutable();
  if (!std::filesystem::exists(worker)) {
    return MakeError(ErrorKind::kNotFound,
                     "the cuda backend is not built here: {} is missing (nvcc was not found when ksmith was configured)",
                     worker.string());
  }
  if (!task.cuda || task.baselines.count("cuda") == 0) {
    return MakeError(ErrorKind::kInvalidArgument, "task '{}' has no CUDA version (no [cuda] table or [baseline.cuda] in {})",
                     task.name, task.toml_path.string());
  }
  std::error_code error;
  if (!std::filesystem::exists("/dev/nvidiactl", error)) {
    return MakeError(ErrorKind::kUnsupported,
                     "no NVIDIA GPU here (/dev/nvidiactl is missing): --backend cuda needs one; --backend cpu runs on this machine");
  }
  auto cache = CacheDirectory();
  if (!cache.ok()) return cache.error();
  auto target = ResolveCudaTarget(arch.empty() ? std::nullopt : std::optional<std::string>(arch));
  if (!target.ok()) return Error{ErrorKind::kInvalidArgument, target.error().message};
  auto compiler = NvccCompiler::Create(*cache, *target);
  if (!compiler.ok()) return compiler.error();
  CudaContext context;
  context.cache_directory = *cache;
  context.worker_executable = worker;
  context.pool = std::make_unique<CudaBuildPool>(std::move(compiler.value()));
  context.gpu = std::async(std::launch::async, [worker, directory = *cache]() -> std::optional<GpuFacts> {
                  try {
                    auto facts = LoadGpuFacts(worker, directory, false);
                    if (facts.ok()) return std::move(facts.value());
                    PrintError("reading the GPU's facts failed: " + facts.error().message);
                  } catch (const std::exception& exception) {
                    PrintError(std::string("reading the GPU's facts failed: ") + exception.what());
                  }
                  return std::nullopt;
                }).share();
  return context;
}

}  // namespace ksmith
