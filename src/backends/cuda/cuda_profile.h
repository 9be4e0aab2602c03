// `ksmith eval --profile`: one replay of the verified candidate on its bench case under ncu,
// turned into short bottleneck facts in a "profile" stage of the verdict.
#pragma once

#include <filesystem>

#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

/// Adds a "profile" stage. A missing or refused ncu, or a verdict whose candidate was never
/// built, gives a stage that says so; the verdict's status never changes.
void AttachCudaProfile(Verdict& verdict, const Task& task, const std::filesystem::path& worker_executable,
                       const std::filesystem::path& scratch_parent);

}  // namespace ksmith
