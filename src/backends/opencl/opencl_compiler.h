// Builds OpenCL C for one device: ksmith-oclc runs clBuildProgram in the build sandbox (PoCL runs
// its linker there), checks every launched kernel's arguments against the task's signature, and
// writes the program binary, which the worker loads. Cached by content.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "compile/build.h"
#include "core/result.h"
#include "task/task.h"

namespace ksmith {

/// ksmith-oclc: $KSMITH_OCLC, else beside this executable.
std::filesystem::path DefaultOclcExecutable();
/// ksmith-opencl-worker: $KSMITH_OPENCL_WORKER, else beside this executable.
std::filesystem::path DefaultOpenclWorkerExecutable();

/// Every OpenCL device ksmith-oclc sees (cl_runtime.h's DeviceFacts each). Errors: the helper is
/// not built or does not run.
Result<nlohmann::json> ListOpenclDevices();

class OpenclCompiler {
 public:
  /// For the device `device` ("" as PickDevice) whose facts are `device_facts` (they key the cache).
  OpenclCompiler(std::filesystem::path cache_directory, std::string device, nlohmann::json device_facts, BuildLimits limits)
      : cache_directory_(std::move(cache_directory)), device_(std::move(device)), device_facts_(std::move(device_facts)),
        limits_(limits) {}

  /// A candidate's or baseline's OpenCL C. A source that breaks the form (no `@launch`), does not
  /// build, or whose kernels' arguments are not the signature's is `compiled == false`, the log
  /// saying why; an Error means the helper itself failed.
  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const;

  const BuildLimits& limits() const { return limits_; }
  const nlohmann::json& device_facts() const { return device_facts_; }

 private:
  std::filesystem::path cache_directory_;
  std::string device_;
  nlohmann::json device_facts_;
  BuildLimits limits_;
};

}  // namespace ksmith
