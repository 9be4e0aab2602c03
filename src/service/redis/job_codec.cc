#include "service/redis/job_codec.h"

#include <fmt/format.h>

#include "core/files.h"
#include "core/hash.h"
#include "eval/candidate_format.h"

namespace ksmith {
namespace {

using json = nlohmann::json;

std::string TomlHash(const Task& task) {
  auto text = ReadFile(task.toml_path, size_t{1} << 20);
  return text.ok() ? Sha256Hex(*text) : std::string();
}

}  // namespace

json EncodeJob(const EvalJob& job) {
  const EvalOptions& options = job.options;
  json encoded = {
      {"id", job.id},
      {"task", {{"name", job.task->name}, {"directory", job.task->directory.string()}, {"toml_sha256", TomlHash(*job.task)}}},
      {"backend", job.backend},
      {"candidate", {{"path", job.candidate.path}, {"text", job.candidate.text},
                     {"format", job.candidate.format != nullptr ? job.candidate.format->name() : std::string()}}},
      {"options", {{"seeds", options.seeds},
                   {"large_elements", options.large_elements},
                   {"call_timeout_ms", options.call_timeout.count()},
                   {"time", options.time},
                   {"timing_budget_s", options.timing_budget_s},
                   {"target_rse", options.target_rse},
                   {"threads", options.threads},
                   {"profile", options.profile},
                   {"second_baseline", options.format_options.second_baseline}}}};
  // A 64-bit seed as text: JSON numbers past 2^53 do not survive every reader.
  if (options.fixed_seed) encoded["options"]["fixed_seed"] = std::to_string(*options.fixed_seed);
  return encoded;
}

Result<EvalJob> DecodeJob(const json& encoded, const TaskRegistry& registry, const FormatLookup& formats) {
  try {
    EvalJob job;
    job.id = encoded.at("id").get<std::string>();
    job.backend = encoded.at("backend").get<std::string>();
    const json& task = encoded.at("task");
    const std::string name = task.at("name").get<std::string>();
    auto found = registry.Find(name);
    if (!found.ok()) {
      // A task the server imported on the fly is not registered here: its folder is, where the
      // cache is shared.
      const std::string directory = task.value("directory", std::string());
      if (!directory.empty()) found = registry.Find(directory);
    }
    if (!found.ok()) {
      return MakeError(ErrorKind::kInvalidArgument, "job {}: task '{}' is not on this worker ({}); give workers the "
                                                    "server's tasks (the same KSMITH_TASKS_PATH, a shared cache folder)",
                       job.id, name, found.error().message);
    }
    job.task = std::make_shared<const Task>(std::move(found.value()));
    const std::string expected = task.value("toml_sha256", std::string());
    if (!expected.empty() && TomlHash(*job.task) != expected) {
      return MakeError(ErrorKind::kInvalidArgument, "job {}: this worker's task '{}' ({}) differs from the server's; "
                                                    "give both the same task folders", job.id, name,
                       job.task->toml_path.string());
    }
    const json& candidate = encoded.at("candidate");
    job.candidate.path = candidate.at("path").get<std::string>();
    job.candidate.text = candidate.at("text").get<std::string>();
    job.candidate.file_bytes = job.candidate.text.size();
    const std::string format = candidate.value("format", std::string());
    if (!format.empty()) {
      job.candidate.format = formats(format);
      if (job.candidate.format == nullptr) {
        return MakeError(ErrorKind::kInvalidArgument, "job {}: candidate format '{}' is unknown to this worker", job.id, format);
      }
    }
    const json& options = encoded.at("options");
    job.options.seeds = options.at("seeds").get<int>();
    job.options.large_elements = options.at("large_elements").get<int64_t>();
    job.options.call_timeout = std::chrono::milliseconds(options.at("call_timeout_ms").get<int64_t>());
    job.options.time = options.at("time").get<bool>();
    job.options.timing_budget_s = options.at("timing_budget_s").get<double>();
    job.options.target_rse = options.at("target_rse").get<double>();
    job.options.threads = options.at("threads").get<int>();
    job.options.profile = options.at("profile").get<bool>();
    job.options.format_options.second_baseline = options.at("second_baseline").get<bool>();
    if (options.contains("fixed_seed")) job.options.fixed_seed = std::stoull(options.at("fixed_seed").get<std::string>());
    job.options.sandbox = true;
    return job;
  } catch (const std::exception& error) {
    return MakeError(ErrorKind::kInvalidArgument, "a job in the stream is not one this worker can read: {}", error.what());
  }
}

}  // namespace ksmith
