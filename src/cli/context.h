// What several subcommands need: the cache folder, the compiler, the machine's facts.
#pragma once

#include <filesystem>
#include <string>

#include "backends/cpu/compiler.h"
#include "backends/cpu/machine.h"
#include "core/result.h"

namespace ksmith {

struct CpuContext {
  std::filesystem::path cache_directory;
  CpuCompiler compiler;
  MachineFacts machine;
};

/// Finds the cache, the compiler and the machine facts (measured once, then cached).
Result<CpuContext> LoadCpuContext(bool refresh_machine);

}  // namespace ksmith
