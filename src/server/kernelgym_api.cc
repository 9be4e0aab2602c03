#include "server/kernelgym_api.h"

#include "server/reward.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace ksmith {
namespace {

using json = nlohmann::json;

const char* ErrorCodeOf(const std::string& status) {
  if (status == "compile_error") return "COMPILATION_ERROR";
  if (status == "runtime_error") return "RUNTIME_ERROR";
  if (status == "timeout") return "TIMEOUT_ERROR";
  if (status == "wrong_output" || status == "integrity_violation") return "CORRECTNESS_ERROR";
  if (status == "infra_error") return "SYSTEM_ERROR";
  return nullptr;
}

}  // namespace

std::optional<ApiError> ParseKernelGymRequest(const json& body, const RequestLimits& limits, KernelGymRequest& request) {
  if (!body.is_object()) return BadRequest("", "the body must be a JSON object (KernelGYM's EvaluationRequest)");
  auto text = [&body](const char* key, std::string& out) -> std::optional<ApiError> {
    const auto found = body.find(key);
    if (found == body.end() || found->is_null()) return std::nullopt;
    if (!found->is_string()) return BadRequest(key, fmt::format("{} must be a string", key));
    out = found->get<std::string>();
    return std::nullopt;
  };
  for (const auto& [key, out] : {std::pair{"task_id", &request.task_id}, std::pair{"reference_code", &request.reference_code},
                                 std::pair{"kernel_code", &request.kernel_code}, std::pair{"backend", &request.backend}}) {
    if (auto error = text(key, *out)) return error;
  }
  if (request.task_id.empty() || request.task_id.size() > 100) {
    return BadRequest("task_id", "task_id: must be between 1 and 100 characters");
  }
  for (const auto& [key, code] : {std::pair{"kernel_code", &request.kernel_code}, std::pair{"reference_code", &request.reference_code}}) {
    if (code->size() > limits.source_bytes) {
      return ApiError{413, "too_large", fmt::format("{}: {} bytes, over this server's limit of {} bytes", key,
                                                    code->size(), limits.source_bytes), key};
    }
  }
  if (request.kernel_code.find_first_not_of(" \t\r\n") == std::string::npos || request.kernel_code.size() < 10) {
    return BadRequest("kernel_code", "kernel_code: missing or shorter than 10 characters; give the ModelNew file");
  }
  std::string workflow = "kernelbench";
  if (auto error = text("workflow", workflow)) return error;
  if (workflow != "kernelbench") {
    return ApiError{422, "unsupported", fmt::format("workflow '{}': ksmith serves the kernelbench workflow only", workflow),
                    "workflow"};
  }
  if (request.reference_code.size() < 10) {
    return BadRequest("reference_code", "reference_code is required for the kernelbench workflow (the problem's Model)");
  }
  std::string entry_point = "Model";
  if (auto error = text("entry_point", entry_point)) return error;
  if (entry_point != "Model") {
    return ApiError{422, "unsupported", fmt::format("entry_point '{}': the reference must define Model, as "
                                                    "KernelBench's problems do", entry_point), "entry_point"};
  }
  if (const auto found = body.find("num_correct_trials"); found != body.end() && !found->is_null()) {
    if (!found->is_number_integer() || found->get<int>() < 1 || found->get<int>() > 20) {
      return BadRequest("num_correct_trials", "num_correct_trials must be an integer from 1 to 20");
    }
    request.num_correct_trials = found->get<int>();
  }
  if (const auto found = body.find("force_refresh"); found != body.end() && found->is_boolean()) {
    request.force_refresh = found->get<bool>();
  }
  for (const char* key : {"num_perf_trials", "num_warmup", "timeout", "priority", "uuid", "use_reference_cache",
                          "reference_backend", "enable_profiling", "device_preference"}) {
    if (const auto found = body.find(key); found != body.end() && !found->is_null()) request.not_followed.push_back(key);
  }
  return std::nullopt;
}

std::string KernelGymStatus(const JobRecord& job) {
  switch (job.state) {
    case JobState::kQueued: return "pending";
    case JobState::kRunning: return "processing";
    case JobState::kDone: return job.verdict.value("status", std::string()) == "infra_error" ? "failed" : "completed";
  }
  return "pending";
}

json KernelGymStatusResponse(const std::string& task_id, const JobRecord& job) {
  json out = {{"task_id", task_id}, {"status", KernelGymStatus(job)}, {"progress", nullptr},
              {"estimated_completion", nullptr}, {"queue_position", nullptr}, {"assigned_device", nullptr}};
  if (job.state == JobState::kDone) {
    out["progress"] = 100.0;
    if (const auto provenance = job.verdict.find("provenance"); provenance != job.verdict.end() && provenance->is_object()) {
      if (provenance->contains("device") && (*provenance)["device"].is_string()) out["assigned_device"] = (*provenance)["device"];
    }
  }
  return out;
}

json KernelGymResultResponse(const std::string& task_id, const JobRecord& job, const std::vector<std::string>& not_followed) {
  json out = {{"task_id", task_id},           {"status", KernelGymStatus(job)}, {"compiled", nullptr},
              {"correctness", nullptr},       {"decoy_kernel", nullptr},        {"reference_runtime", nullptr},
              {"kernel_runtime", nullptr},    {"speedup", nullptr},             {"metadata", json::object()},
              {"error_message", nullptr},     {"error_code", nullptr},          {"submitted_at", IsoTime(job.submitted_at)},
              {"completed_at", nullptr},      {"processing_time", nullptr}};
  out["metadata"]["ksmith_job_id"] = job.id;
  if (!not_followed.empty()) out["metadata"]["not_followed"] = not_followed;
  if (job.state != JobState::kDone) return out;
  const json& verdict = job.verdict;
  const std::string status = verdict.value("status", std::string());
  out["completed_at"] = IsoTime(job.finished_at);
  out["processing_time"] = std::chrono::duration<double>(job.finished_at - job.submitted_at).count();
  out["compiled"] = status != "compile_error" && status != "infra_error";
  out["correctness"] = status == "passed";
  // A kernel caught pretending (an integrity violation) is what KernelGYM calls a decoy; its
  // reward client gives it the worst reward. One that leaves all the work to torch is correct and
  // honest: said in the metadata (ksmith's own reward gives it nothing).
  out["decoy_kernel"] = status == "integrity_violation";
  out["metadata"]["custom_kernel"] = !HasLabelStartingWith(verdict, "no custom kernel");
  if (const auto timing = verdict.find("timing"); timing != verdict.end() && timing->is_object()) {
    auto median_ms = [&timing](const char* side) -> json {
      const auto found = timing->find(side);
      if (found == timing->end() || !found->is_object() || !found->contains("median")) return nullptr;
      return (*found)["median"].get<double>() / 1000.0;
    };
    out["kernel_runtime"] = median_ms("candidate_us");
    out["reference_runtime"] = median_ms("baseline_us");
  }
  if (verdict.contains("speedup")) out["speedup"] = verdict["speedup"];
  if (status != "passed") {
    out["error_message"] = verdict.value("reason", status);
    if (const char* code = ErrorCodeOf(status)) out["error_code"] = code;
  }
  out["metadata"]["ksmith_status"] = status;
  out["metadata"]["ksmith_verdict"] = verdict;
  if (const auto provenance = verdict.find("provenance"); provenance != verdict.end() && provenance->is_object()) {
    out["metadata"]["backend"] = verdict.value("backend", std::string());
    if (provenance->contains("device")) out["metadata"]["device"] = (*provenance)["device"];
  }
  return out;
}

}  // namespace ksmith
