// The audit: the candidate's source and its built binary against the candidate contract.
//
// The source audit gives early, readable reasons (a forbidden header, inline assembly); the
// binary audit is the one that cannot be dodged by macros or spelling: it reads what the shared
// object imports from other libraries.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cpu/disassembly.h"
#include "backend/cpu/elf_symbols.h"
#include "task/task.h"

namespace ksmith {

struct AuditFinding {
  std::string rule;     // e.g. "thread_creation"
  std::string message;  // what was found and why it is not allowed
  int line = 0;         // source line, 0 for binary findings

  nlohmann::json ToJson() const;
};

/// Comments and string literals do not count; a finding names the line.
std::vector<AuditFinding> AuditSource(std::string_view source, const Task& task);

/// `symbols` of the built candidate; `entry_names` are the exports it is expected to have.
std::vector<AuditFinding> AuditBinary(const DynamicSymbols& symbols, const Task& task);

/// The instructions to look for in a built candidate, and the findings for those present.
const std::vector<std::string>& ForbiddenInstructions();
std::vector<AuditFinding> AuditInstructions(const std::vector<InstructionUse>& uses);

/// What a failed build's log reveals: a forbidden symbol the link could not resolve (BLAS, say)
/// or a file the walled-in compiler was denied (an include trick) is a contract violation
/// rather than a mere compile error.
std::vector<AuditFinding> AuditBuildLog(std::string_view log, const Task& task);

/// The source with comments and string/char literals blanked (newlines kept), for scanning.
std::string StripCommentsAndStrings(std::string_view source);

}  // namespace ksmith
