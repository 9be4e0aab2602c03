#include "agent/verdict_facts.h"

#include <algorithm>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "core/strings.h"

namespace ksmith {
namespace {

using Json = nlohmann::json;

// std::regex recurses per character: only bounded text goes through it.
constexpr size_t kMaxParsedBytes = 16000;
constexpr size_t kMaxParsedLineChars = 2000;

const Json& EmptyObject() {
  static const Json empty = Json::object();
  return empty;
}

int64_t ToInt(const std::string& digits) { return std::strtoll(digits.c_str(), nullptr, 10); }

}  // namespace

// --- Accessors -------------------------------------------------------------------------------

std::string JsonString(const Json& object, const char* key) {
  const auto found = object.is_object() ? object.find(key) : object.end();
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

double JsonNumber(const Json& object, const char* key, double fallback) {
  const auto found = object.is_object() ? object.find(key) : object.end();
  return found != object.end() && found->is_number() ? found->get<double>() : fallback;
}

const Json& JsonObject(const Json& object, const char* key) {
  const auto found = object.is_object() ? object.find(key) : object.end();
  return found != object.end() && found->is_object() ? *found : EmptyObject();
}

const Json& JsonArray(const Json& object, const char* key) {
  static const Json empty = Json::array();
  const auto found = object.is_object() ? object.find(key) : object.end();
  return found != object.end() && found->is_array() ? *found : empty;
}

std::optional<std::pair<double, double>> Interval95(const Json& estimate) {
  const Json& ci = JsonArray(estimate, "ci95");
  if (ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number()) return std::nullopt;
  return std::pair(ci[0].get<double>(), ci[1].get<double>());
}

const Json& Stage(const Json& verdict, std::string_view name) {
  for (const auto& stage : JsonArray(verdict, "stages")) {
    if (stage.is_object() && JsonString(stage, "name") == name) return stage;
  }
  return EmptyObject();
}

const Json& Details(const Json& stage) { return JsonObject(stage, "details"); }

const Json& FailedStage(const Json& verdict) {
  const Json& stages = JsonArray(verdict, "stages");
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    if (it->is_object() && JsonString(*it, "outcome") == "failed") return *it;
  }
  return EmptyObject();
}

// --- Failing cases ---------------------------------------------------------------------------

CaseLabel ParseCaseLabel(const std::string& label) {
  CaseLabel parsed;
  size_t start = 0;
  while (start <= label.size()) {
    size_t end = label.find(", ", start);
    if (end == std::string::npos) end = label.size();
    const std::string part = label.substr(start, end - start);
    const size_t equals = part.find('=');
    if (parsed.distribution.empty() && equals != std::string::npos) {
      parsed.shape += (parsed.shape.empty() ? "" : ", ") + part;
      const int64_t value = std::atoll(part.c_str() + equals + 1);
      parsed.smallest_dim = parsed.smallest_dim == 0 ? value : std::min(parsed.smallest_dim, value);
    } else if (parsed.distribution.empty()) {
      parsed.distribution = part;
    } else {
      parsed.rest += (parsed.rest.empty() ? "" : ", ") + part;
    }
    start = end + 2;
  }
  return parsed;
}

std::string RunningCase(const std::string& reason) {
  const std::string first_line = FirstLine(reason, kMaxParsedLineChars);
  std::smatch match;
  return std::regex_search(first_line, match, std::regex(R"(while running case (.+)$)")) ? match[1].str()
                                                                                          : std::string();
}

Mismatch ParseMismatch(const std::string& found) {
  const std::string text = found.substr(0, kMaxParsedLineChars);
  Mismatch mismatch;
  std::smatch match;
  if (std::regex_search(text, match, std::regex(R"((\d+) of (\d+) output elements were never written)"))) {
    mismatch.unwritten = ToInt(match[1]);
    mismatch.count = ToInt(match[2]);
  }
  if (std::regex_search(text, match, std::regex(R"((\d+) elements are NaN or Inf)")))
    mismatch.nonfinite = ToInt(match[1]);
  if (std::regex_search(text, match, std::regex(R"((\d+) of (\d+) elements exceed)"))) {
    mismatch.over_bound = ToInt(match[1]);
    mismatch.count = ToInt(match[2]);
  }
  if (std::regex_search(text, match, std::regex(R"(norm-wise relative error (\S+) \(bound (\S+)\))"))) {
    mismatch.norm_error = std::atof(match[1].str().c_str());
    mismatch.norm_bound = std::atof(match[2].str().c_str());
  }
  if (std::regex_search(text, match, std::regex(R"(worst element \[(\d+)\].*\(\|error\| ([^)]+)\))"))) {
    mismatch.worst_index = match[1];
    mismatch.worst_error = match[2];
  }
  return mismatch;
}

std::string WhatWasFound(const std::string& reason, const std::string& label) {
  if (label.empty()) return reason;
  const size_t at = reason.find(label + ": ");
  return at == std::string::npos ? reason : reason.substr(at + label.size() + 2);
}

// --- Compiler logs ---------------------------------------------------------------------------

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
