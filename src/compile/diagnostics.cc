#include "compile/diagnostics.h"

#include <algorithm>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "core/json_fields.h"
#include "core/strings.h"

namespace ksmith {
namespace {

// std::regex recurses per character: only bounded text goes through it.
constexpr size_t kMaxParsedBytes = 16000;
constexpr size_t kMaxParsedLineChars = 2000;

int64_t ToInt(const std::string& digits) { return std::strtoll(digits.c_str(), nullptr, 10); }

}  // namespace

// The field list (core/json_fields.h), in ksmith itself for argument-dependent lookup.
template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, Diagnostic> {
  io("file", self.file);
  io("line", self.line);
  io("message", self.message);
  io("notes", self.notes);
}

nlohmann::json Diagnostic::ToJson() const { return json_fields::ToObject(*this); }
Diagnostic Diagnostic::FromJson(const nlohmann::json& json) { return json_fields::FromObject<Diagnostic>(json); }

// The wrappers ksmith compiles around a candidate name the required declaration
// "ksmith-expected-signature"; absolute paths are system and toolkit headers.
bool InCandidate(const std::string& file) {
  if (file.empty() || file == "ksmith-expected-signature" || file.front() == '/') return false;
  const std::string name = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
  return !name.starts_with("ksmith_wrapper");
}

std::vector<Diagnostic> ParseDiagnostics(std::string_view log) {
  static const std::regex gcc(R"(^(.+?):(\d+):(?:\d+:)? (fatal error|error|note): (.*)$)");
  static const std::regex nvcc(R"(^(.+?)\((\d+)\): (catastrophic error|error)[^:]*: (.*)$)");
  static const std::regex undefined(R"(undefined reference to `([^']+)')");
  std::vector<Diagnostic> errors;
  for (const auto& line : SplitLines(log.substr(0, kMaxParsedBytes))) {
    if (line.size() > kMaxParsedLineChars) continue;
    std::smatch match;
    if (std::regex_match(line, match, gcc) || std::regex_match(line, match, nvcc)) {
      Diagnostic diagnostic{match[1], static_cast<int>(std::min<int64_t>(ToInt(match[2]), 1 << 30)), match[4], {}};
      if (match[3] != "note") {
        errors.push_back(std::move(diagnostic));
      } else if (!errors.empty() && InCandidate(diagnostic.file) && errors.back().notes.empty()) {
        errors.back().notes.push_back(std::move(diagnostic));
      }
    } else if (std::regex_search(line, match, undefined)) {
      errors.push_back(
          {"", 0, fmt::format("undefined reference to `{}` (the linker found no such function)", match[1].str()), {}});
    } else if (line.starts_with("ptxas error") || line.starts_with("ptxas fatal")) {
      errors.push_back({"", 0, std::string(Trim(line.substr(line.find(':') + 1))), {}});
    }
  }
  return errors;
}

}  // namespace ksmith
