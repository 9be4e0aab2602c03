// Reads the symbol tables of a shared object, for the binary audit.
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
  /// Every function or object the file defines, by the full symbol table (.symtab) as well as
  /// the dynamic one: hidden and static ones included. Sorted, without duplicates; empty when
  /// the file was stripped and exports nothing.
  std::vector<std::string> defined;
};

Result<DynamicSymbols> ReadDynamicSymbols(const std::filesystem::path& shared_object);

}  // namespace ksmith
