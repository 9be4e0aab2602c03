// The build sandbox's parts that a KernelBench candidate's build (candidate_build.h) and the
// compiled baseline's warm step (compiled_baseline.h) share: the python that imported the task,
// the environment it gets, and the Landlock rules it runs under (it may read the system and torch,
// run the system's programs, and write only its own folder).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/build.h"
#include "core/landlock.h"
#include "core/result.h"
#include "task/task.h"

namespace ksmith {

/// Compilers a build sandbox runs at once (torch's MAX_JOBS: load_inline's C++ and CUDA sources
/// build side by side).
inline constexpr size_t kBuildSandboxCompilers = 2;

/// The limits of a build sandbox's processes: each as any build's, and all of them together
/// (python, ninja and the compilers) within more than one build's limit, since python holds torch
/// beside its compilers. On the CPU python also holds the problem's inputs at its own sizes (6.4 GB
/// for 4096 x 393216 floats) up to its own limit: twice the limit. On the GPU build.py draws them
/// there: one and a half. The compile pool counts it so (memory slots are half limits), since a
/// candidate's code in the sandbox may hold its tree's limit on purpose.
size_t BuildSandboxSlots(bool cuda);
ChildLimits BuildSandboxLimits(const BuildLimits& limits, bool cuda);

/// The python3 that imported the task (its analysis's "python").
std::string KernelBenchPython(const nlohmann::json& analysis);

/// Only what python, the compilers and the GPU's libraries need from the user's environment,
/// with HOME, TMPDIR, caches and torch's and Triton's build folders inside `work`.
std::vector<std::string> BuildSandboxEnvironment(const std::filesystem::path& work, bool cuda);

/// Reads the system, python and torch; runs the system's programs; writes only `work` (and, on
/// the GPU, the device files the driver opens read-write).
Result<LandlockRuleset> BuildSandboxRuleset(const nlohmann::json& analysis, const std::filesystem::path& work,
                                            bool cuda);

/// [{dim: value}, ...] as the sandbox's scripts read shapes.
nlohmann::json ShapesJson(const std::vector<DimValues>& shapes);

}  // namespace ksmith
