// The optimize loop's evaluations as jobs of the evaluation service.
#pragma once

#include <memory>
#include <string>

#include "agent/optimize_loop.h"
#include "eval/eval_options.h"
#include "service/eval_client.h"
#include "task/task.h"

namespace ksmith {

/// Each candidate becomes a job for `backend` with `options`; `client` outlives the evaluator.
std::unique_ptr<CandidateEvaluator> MakeServiceCandidateEvaluator(EvalClient& client,
                                                                  std::shared_ptr<const Task> task,
                                                                  std::string backend, EvalOptions options);

}  // namespace ksmith
