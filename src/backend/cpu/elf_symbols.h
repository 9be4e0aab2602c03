// Reads the dynamic symbol table of a shared object, for the binary audit.
// Written against glibc's <elf.h> rather than libelf: it needs one table, and the GPU machine
// has no libelf headers.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace ksmith {

struct DynamicSymbols {
  std::vector<std::string> imported;  // undefined: resolved from other libraries at load time
  std::vector<std::string> exported;  // defined with default visibility
  std::vector<std::string> needed;    // DT_NEEDED libraries
};

Result<DynamicSymbols> ReadDynamicSymbols(const std::filesystem::path& shared_object);

}  // namespace ksmith
