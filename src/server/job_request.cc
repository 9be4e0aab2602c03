#include "server/job_request.h"

#include <algorithm>
#include <iterator>
#include <type_traits>

#include <fmt/format.h>

#include "core/setting_ranges.h"

namespace ksmith {
namespace {

using json = nlohmann::json;

constexpr const char* kCandidateKeys[] = {"task", "backend", "format", "file_name", "source", "client_id", "options"};
constexpr const char* kOptionKeys[] = {"seeds", "time", "timing_budget_s", "timeout_ms"};

// A string field of `object`, or nothing when absent; an error when present and not a string.
std::optional<ApiError> OptionalString(const json& object, const char* key, const std::string& where,
                                       std::string& out) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return std::nullopt;
  if (!found->is_string()) {
    return BadRequest(where + "." + key, fmt::format("{}.{} must be a string, not {}", where, key, found->type_name()));
  }
  out = found->get<std::string>();
  return std::nullopt;
}

// Each option within the range its command-line flag allows (cli/setting_ranges.h).
std::optional<ApiError> ParseOptions(const json& options, const std::string& where, RequestedOptions& out) {
  if (!options.is_object()) {
    return BadRequest(where, fmt::format("{} must be an object, not {}", where, options.type_name()));
  }
  for (const auto& [key, value] : options.items()) {
    if (std::find(std::begin(kOptionKeys), std::end(kOptionKeys), key) == std::end(kOptionKeys)) {
      return BadRequest(where + "." + key,
                        fmt::format("{}.{}: unknown option (known: seeds, time, timing_budget_s, timeout_ms)", where, key));
    }
  }
  auto number = [&](const char* key, const char* range, auto& target) -> std::optional<ApiError> {
    const auto found = options.find(key);
    if (found == options.end() || found->is_null()) return std::nullopt;
    const std::string field = where + "." + key;
    if (!found->is_number()) return BadRequest(field, fmt::format("{} must be a number", field));
    const double value = found->get<double>();
    if (const std::string problem = CheckRange(*RangeOf(range), found->dump()); !problem.empty()) {
      return BadRequest(field, fmt::format("{}: {}", field, problem));
    }
    using Target = typename std::remove_reference_t<decltype(target)>::value_type;
    target = static_cast<Target>(value);
    return std::nullopt;
  };
  if (auto error = number("seeds", "seeds", out.seeds)) return error;
  if (auto error = number("timing_budget_s", "timing_budget_s", out.timing_budget_s)) return error;
  if (auto error = number("timeout_ms", "timeout_ms", out.timeout_ms)) return error;
  if (const auto time = options.find("time"); time != options.end() && !time->is_null()) {
    if (!time->is_boolean()) return BadRequest(where + ".time", where + ".time must be true or false");
    out.time = time->get<bool>();
  }
  return std::nullopt;
}

std::optional<ApiError> ParseOne(const json& object, const std::string& where, const CandidateRequest& defaults,
                                 const RequestLimits& limits, CandidateRequest& out) {
  if (!object.is_object()) {
    return BadRequest(where, fmt::format("{} must be an object with task, source and backend, not {}", where,
                                         object.type_name()));
  }
  out = defaults;
  for (const auto& [key, value] : object.items()) {
    // The envelope's own keys, when one candidate is the whole body.
    if (key == "candidates" || key == "wait_s") continue;
    if (std::find(std::begin(kCandidateKeys), std::end(kCandidateKeys), key) == std::end(kCandidateKeys)) {
      return BadRequest(where + "." + key,
                        fmt::format("{}.{}: unknown field (a candidate has task, backend, format, file_name, "
                                    "source, client_id and options)", where, key));
    }
  }
  for (const auto& [key, target] : {std::pair{"task", &out.task}, std::pair{"backend", &out.backend},
                                    std::pair{"format", &out.format}, std::pair{"file_name", &out.file_name},
                                    std::pair{"client_id", &out.client_id}}) {
    if (auto error = OptionalString(object, key, where, *target)) return error;
  }
  const auto source = object.find("source");
  if (source == object.end() || !source->is_string()) {
    return BadRequest(where + ".source", fmt::format("{}.source: missing; give the candidate's code as a string", where));
  }
  if (source->get_ref<const std::string&>().size() > limits.source_bytes) {
    return ApiError{413, "too_large",
                    fmt::format("{}.source: {} bytes, over this server's limit of {} bytes per source", where,
                                source->get_ref<const std::string&>().size(), limits.source_bytes),
                    where + ".source"};
  }
  out.source = source->get<std::string>();
  if (out.task.empty()) return BadRequest(where + ".task", fmt::format("{}.task: missing; name a task (GET /v1/tasks lists them)", where));
  if (!IsPlainName(out.task)) {
    return BadRequest(where + ".task", fmt::format("{}.task: '{}' is not a task name (letters, digits, '_', '-', '.')",
                                                   where, out.task));
  }
  if (!out.file_name.empty() && !IsPlainName(out.file_name)) {
    return BadRequest(where + ".file_name",
                      fmt::format("{}.file_name: '{}' must be a bare file name such as kernel.cu", where, out.file_name));
  }
  if (out.client_id.size() > 200) {
    return BadRequest(where + ".client_id", fmt::format("{}.client_id: at most 200 characters", where));
  }
  if (const auto options = object.find("options"); options != object.end() && !options->is_null()) {
    if (auto error = ParseOptions(*options, where + ".options", out.options)) return error;
  }
  return std::nullopt;
}

}  // namespace

bool IsPlainName(const std::string& name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (const char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                       c == '-' || c == '.';
    if (!plain) return false;
  }
  return true;
}

void RequestedOptions::ApplyTo(EvalOptions& options) const {
  if (seeds) options.seeds = *seeds;
  if (time) options.time = *time;
  if (timing_budget_s) options.timing_budget_s = *timing_budget_s;
  if (timeout_ms) options.call_timeout = std::chrono::milliseconds(*timeout_ms);
}

nlohmann::json RequestedOptions::ToJson() const {
  json out = json::object();
  if (seeds) out["seeds"] = *seeds;
  if (time) out["time"] = *time;
  if (timing_budget_s) out["timing_budget_s"] = *timing_budget_s;
  if (timeout_ms) out["timeout_ms"] = *timeout_ms;
  return out;
}

std::optional<ApiError> ParseCandidates(const json& body, const RequestLimits& limits,
                                        std::vector<CandidateRequest>& candidates) {
  if (!body.is_object()) {
    return BadRequest("", fmt::format("the body must be a JSON object (a candidate, or {{\"candidates\": [...]}}), not {}",
                                      body.type_name()));
  }
  const auto list = body.find("candidates");
  if (list == body.end()) {
    CandidateRequest one;
    if (auto error = ParseOne(body, "body", CandidateRequest{}, limits, one)) return error;
    candidates.push_back(std::move(one));
    return std::nullopt;
  }
  if (!list->is_array() || list->empty()) {
    return BadRequest("candidates", "candidates must be a non-empty array of candidate objects");
  }
  if (list->size() > limits.candidates_per_request) {
    return ApiError{413, "too_many_candidates",
                    fmt::format("candidates: {} in one request, over this server's limit of {}; split the batch",
                                list->size(), limits.candidates_per_request),
                    "candidates"};
  }
  // The envelope's task, backend, format and options are each candidate's defaults.
  CandidateRequest defaults;
  for (const auto& [key, value] : body.items()) {
    if (key != "candidates" && key != "task" && key != "backend" && key != "format" && key != "options" &&
        key != "wait_s") {
      return BadRequest(key, fmt::format("{}: unknown field (the envelope has candidates, task, backend, format, "
                                         "options and, for /v1/rewards, wait_s)", key));
    }
  }
  for (const auto& [key, target] : {std::pair{"task", &defaults.task}, std::pair{"backend", &defaults.backend},
                                    std::pair{"format", &defaults.format}}) {
    if (auto error = OptionalString(body, key, "body", *target)) return error;
  }
  if (const auto options = body.find("options"); options != body.end() && !options->is_null()) {
    if (auto error = ParseOptions(*options, "options", defaults.options)) return error;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    CandidateRequest one;
    if (auto error = ParseOne((*list)[i], fmt::format("candidates[{}]", i), defaults, limits, one)) return error;
    candidates.push_back(std::move(one));
  }
  return std::nullopt;
}

}  // namespace ksmith
