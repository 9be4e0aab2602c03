// KernelGYM's API (hkust-nlp/KernelGYM, server/api/models.py at 3a84417) over ksmith's verdicts, so
// that a trainer written for KernelGYM (Dr.Kernel's reward client) switches by changing its URL:
// POST /evaluate with its request's field names, then GET /status/{task_id} and
// GET /results/{task_id} with its result's. The client's task_id is the job's idempotency key.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/job_request.h"
#include "server/job_table.h"

namespace ksmith {

struct KernelGymRequest {
  std::string task_id;
  std::string reference_code;
  std::string kernel_code;
  std::string backend;  // KernelGYM's: "cuda" or "triton" (both: a ModelNew judged on the GPU)
  bool force_refresh = false;
  int num_correct_trials = 5;
  /// Fields ksmith reads but does not follow, named in the result's metadata (ksmith's timing
  /// stops on noise, not at a trial count; its call timeout is per call).
  std::vector<std::string> not_followed;
};

/// Checks a POST /evaluate body as KernelGYM's pydantic model does (task_id 1-100 characters,
/// code at least 10 characters, the kernelbench workflow), and ksmith's source limit.
std::optional<ApiError> ParseKernelGymRequest(const nlohmann::json& body, const RequestLimits& limits,
                                              KernelGymRequest& request);

/// KernelGYM's TaskStatus of a job: pending, processing, completed (a verdict, whatever it
/// says), failed (ksmith's own fault: infra_error).
std::string KernelGymStatus(const JobRecord& job);
/// GET /status/{task_id}'s body (TaskStatusResponse).
nlohmann::json KernelGymStatusResponse(const std::string& task_id, const JobRecord& job);
/// GET /results/{task_id}'s and POST /evaluate's body (EvaluationResponse). `compiled`,
/// `correctness`, the runtimes (ms, as KernelBench's) and `speedup` come from the verdict; an
/// integrity violation is a `decoy_kernel`, as KernelGYM calls a kernel that only pretends;
/// `metadata.custom_kernel` is false for a torch-only ModelNew; the whole verdict is in
/// `metadata.ksmith_verdict`.
nlohmann::json KernelGymResultResponse(const std::string& task_id, const JobRecord& job,
                                       const std::vector<std::string>& not_followed = {});

}  // namespace ksmith
