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

#include "binary/disassembly.h"
#include "binary/elf_symbols.h"
#include "core/source_text.h"  // StripComments, StripCommentsAndStrings: the audits' scanning
#include "task/task.h"

namespace ksmith {

struct AuditFinding {
  std::string rule;     // e.g. "thread_creation"
  std::string message;  // what was found and why it is not allowed
  int line = 0;         // source line, 0 for binary findings

  nlohmann::json ToJson() const;
  static AuditFinding FromJson(const nlohmann::json& json);
};

/// Comments and string literals do not count; a finding names the line.
std::vector<AuditFinding> AuditSource(std::string_view source, const Task& task);

/// A source rule: an ECMAScript regex searched in each line of the scanned text.
struct SourceRule {
  const char* rule;
  const char* pattern;
  const char* why;
};

/// The CPU contract's source rules (AuditSource adds the library rule when the task forbids it).
const std::vector<SourceRule>& CpuSourceRules();

/// A finding for each line of `scanned` (the source with comments, and usually literals,
/// blanked: same length and line breaks) that a rule matches; the message quotes `source`'s line.
std::vector<AuditFinding> ScanSource(std::string_view source, std::string_view scanned,
                                     const std::vector<SourceRule>& rules);

/// `symbols` of the built candidate; `entry_names` are the exports it is expected to have.
std::vector<AuditFinding> AuditBinary(const DynamicSymbols& symbols, const Task& task);

/// The findings for one imported symbol under the contract's rules shared by every backend
/// (processes, threads, network, files, dynamic loading, exit, environment, signals, clocks,
/// page protections, process control); library calls are each backend's own rule.
std::vector<AuditFinding> AuditImportedSymbol(std::string_view name);

/// The instructions to look for in a built candidate, and the findings for those present.
const std::vector<std::string>& ForbiddenInstructions();
std::vector<AuditFinding> AuditInstructions(const std::vector<InstructionUse>& uses);

/// What a failed build's log reveals: a forbidden symbol the link could not resolve (BLAS, say)
/// or a file the walled-in compiler was denied (an include trick) is a contract violation
/// rather than a mere compile error.
std::vector<AuditFinding> AuditBuildLog(std::string_view log, const Task& task);


}  // namespace ksmith
