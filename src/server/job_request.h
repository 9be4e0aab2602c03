// What a client asks `ksmith serve` to judge: the candidates of one request, checked field by field
// before anything is queued. Nothing a client sends names a file: a task is a registered name, and
// a file name only chooses the candidate's format and appears in messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/eval_options.h"
#include "server/api_error.h"

namespace ksmith {

/// What one request may hold. A source past `source_bytes` is refused here, before it is queued.
struct RequestLimits {
  size_t source_bytes = kMaxCandidateBytes;
  size_t candidates_per_request = 256;
};

/// The evaluation settings a client may choose, each checked against the same ranges as the
/// command line's flags; unset: the server's defaults.
struct RequestedOptions {
  std::optional<int> seeds;
  std::optional<bool> time;
  std::optional<double> timing_budget_s;
  std::optional<int> timeout_ms;

  /// Applies the set fields over `options`.
  void ApplyTo(EvalOptions& options) const;
  nlohmann::json ToJson() const;
};

struct CandidateRequest {
  std::string task;       // a task's registered name
  std::string backend;    // empty: the server's only backend
  std::string format;     // a format's name; empty: from file_name (a .py is a KernelBench ModelNew)
  std::string file_name;  // for messages and the format; a bare name, never a path
  std::string source;
  std::string client_id;  // the client's idempotency key; empty: none
  RequestedOptions options;
};

/// The candidates of a POST /v1/evaluations or /v1/rewards body: one candidate object, or
/// {"candidates": [...]} with "task", "backend", "format" and "options" as defaults for each.
/// The error names the field ("candidates[3].task").
std::optional<ApiError> ParseCandidates(const nlohmann::json& body, const RequestLimits& limits,
                                        std::vector<CandidateRequest>& candidates);

/// Whether `name` may be a task's or a file's name here: letters, digits, '_', '-', '.', not
/// starting with '.', at most 128 characters (nothing that could step out of a folder).
bool IsPlainName(const std::string& name);

}  // namespace ksmith
