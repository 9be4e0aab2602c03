// What several subcommands need: the cache folder, the compiler, the machine's facts.
#pragma once

#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "backend/cpu/compiler.h"
#include "backend/cpu/machine.h"
#include "backend/cuda/build_pool.h"
#include "backend/cuda/gpu_facts.h"
#include "core/result.h"

namespace ksmith {

struct CpuContext {
  std::filesystem::path cache_directory;
  CpuCompiler compiler;
  MachineFacts machine;
};

/// Finds the cache, the compiler and the machine facts (measured once, then cached).
Result<CpuContext> LoadCpuContext(bool refresh_machine);

struct Task;

struct CudaContext {
  std::filesystem::path cache_directory;
  std::filesystem::path worker_executable;
  std::unique_ptr<CudaBuildPool> pool;
  /// Measured once per GPU and cached; being measured in the background while the first
  /// candidates build (nullopt when it could not be read).
  std::shared_future<std::optional<GpuFacts>> gpu;
};

/// Checks that the cuda backend can run `task` here (the worker is built, the task has a CUDA
/// version, there is a GPU), then starts the compile pool for `arch` (empty: the GPU found).
/// kInvalidArgument errors are the user's (no CUDA version, bad --arch); others are this machine's.
Result<CudaContext> LoadCudaContext(const Task& task, const std::string& arch);

}  // namespace ksmith
