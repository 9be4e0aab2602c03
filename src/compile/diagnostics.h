// Compiler diagnostics read from a build log: gcc/clang, nvcc, the linker and ptxas, so that a
// failed build's verdict lists its errors as fields (file, line, message) and no reader parses
// the log again.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith {

struct Diagnostic {
  std::string file;  // as the compiler printed it; empty for linker and ptxas messages
  int line = 0;
  std::string message;
  std::vector<Diagnostic> notes;  // notes that point into the candidate

  nlohmann::json ToJson() const;
  static Diagnostic FromJson(const nlohmann::json& json);
};

/// Whether a diagnostic's file is the candidate's source: not the required declaration
/// ("ksmith-expected-signature"), a ksmith wrapper, or a system header (absolute path).
bool InCandidate(const std::string& file);

/// gcc/clang ("file:12:5: error: ...") and nvcc ("file(12): error: ...") diagnostics, linker
/// "undefined reference" lines and ptxas errors; errors in order, each with the first candidate
/// note that follows it. Reads only the log's first 16 kB, and skips overlong lines.
std::vector<Diagnostic> ParseDiagnostics(std::string_view log);

}  // namespace ksmith
