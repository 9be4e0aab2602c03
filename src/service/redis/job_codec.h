// A job as it travels through Redis: JSON with the task by name (and folder, and the hash of its
// task.toml), the candidate's text and format by name, and the options a client may set. A worker
// loads the task itself, and refuses to judge against a task.toml that differs from the server's.
// Whether the candidate runs in the sandbox is not part of it: a worker always walls it in.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "service/eval_service.h"
#include "task/registry.h"

namespace ksmith {

/// A candidate format by name (formats/format_registry.h, which sits above this module); null
/// when unknown.
using FormatLookup = std::function<const CandidateFormat*(std::string_view name)>;

nlohmann::json EncodeJob(const EvalJob& job);

/// The job `encoded` names, with its task loaded here: by name from `registry`, else from the
/// folder the server named (a task the server imported on the fly: a shared folder). kInvalidArgument
/// says what is wrong (an unknown task or format, a task.toml that differs from the server's).
Result<EvalJob> DecodeJob(const nlohmann::json& encoded, const TaskRegistry& registry, const FormatLookup& formats);

}  // namespace ksmith
