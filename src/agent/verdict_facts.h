// Facts read out of a verdict's JSON: tolerant field accessors, the failing case's label and
// mismatch numbers taken apart, and compiler diagnostics parsed from the build log. Kept apart
// from the feedback renderer so that what a verdict says is parsed (and tested) in one place and
// the wording built on it in another.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith {

// --- Accessors -------------------------------------------------------------------------------
// Verdicts come from the store too, written by older versions: a missing field, or one of another
// type, reads as empty (or `fallback`) rather than throwing.

/// `object[key]` when it is a string, else "".
std::string JsonString(const nlohmann::json& object, const char* key);

/// `object[key]` when it is a number, else `fallback`.
double JsonNumber(const nlohmann::json& object, const char* key, double fallback = 0);

/// `object[key]` when it is an object, else an empty object.
const nlohmann::json& JsonObject(const nlohmann::json& object, const char* key);

/// `object[key]` when it is an array, else an empty array.
const nlohmann::json& JsonArray(const nlohmann::json& object, const char* key);

/// The [low, high] of an estimate's 95% interval, when both ends are numbers (NaN is stored as null).
std::optional<std::pair<double, double>> Interval95(const nlohmann::json& estimate);

/// The verdict's stage called `name`, or an empty object.
const nlohmann::json& Stage(const nlohmann::json& verdict, std::string_view name);

/// A stage's "details" object.
const nlohmann::json& Details(const nlohmann::json& stage);

/// The stage that ended the evaluation (the last one marked failed), or an empty object.
const nlohmann::json& FailedStage(const nlohmann::json& verdict);

// --- Failing cases ---------------------------------------------------------------------------

/// "rows=37, cols=5, large, seed #2 (random shape)" taken apart.
struct CaseLabel {
  std::string shape;         // "rows=37, cols=5"
  std::string distribution;  // "large"
  std::string rest;          // "seed #2 (random shape)"
  int64_t smallest_dim = 0;  // 0 when the label names no size
};

CaseLabel ParseCaseLabel(const std::string& label);

/// The case a worker was running when it died, which only the reason names
/// ("... while running case n=1, normal, seed #1"); empty when it names none.
std::string RunningCase(const std::string& reason);

/// The numbers of Comparison::Describe(); zero or empty where the text does not state them.
struct Mismatch {
  int64_t unwritten = 0, nonfinite = 0, over_bound = 0, count = 0;
  double norm_error = 0, norm_bound = 0;
  std::string worst_index, worst_error;
};

Mismatch ParseMismatch(const std::string& found);

/// The part of the reason after the case label ("<label>: ..."): what the check found.
/// The whole reason when the label is empty or not in it.
std::string WhatWasFound(const std::string& reason, const std::string& label);

// --- Compiler logs ---------------------------------------------------------------------------

struct Diagnostic {
  std::string file;  // as the compiler printed it; empty for linker and ptxas messages
  int line = 0;
  std::string message;
  std::vector<Diagnostic> notes;  // notes that point into the candidate
};

/// Whether a diagnostic's file is the candidate's source: not the required declaration
/// ("ksmith-expected-signature"), a ksmith wrapper, or a system header (absolute path).
bool InCandidate(const std::string& file);

/// gcc/clang ("file:12:5: error: ...") and nvcc ("file(12): error: ...") diagnostics, linker
/// "undefined reference" lines and ptxas errors; errors in order, each with the first candidate
/// note that follows it. Reads only the log's first 16 kB, and skips overlong lines.
std::vector<Diagnostic> ParseDiagnostics(std::string_view log);

}  // namespace ksmith
