// This process's child processes, read from /proc: for tests that check no worker outlives its
// job, or that pick a running worker to kill.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>

namespace ksmith::testing {

/// Children of this process that run `executable`, each with the CPU time it used so far
/// [clock ticks].
std::map<pid_t, uint64_t> ChildProcessesRunning(const std::filesystem::path& executable);

}  // namespace ksmith::testing
