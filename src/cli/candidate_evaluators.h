// The two evaluation pipelines behind the optimize loop's one interface.
#pragma once

#include <memory>

#include "agent/optimize_loop.h"
#include "cli/context.h"
#include "eval/evaluator.h"
#include "task/task.h"

namespace ksmith {

/// The CPU pipeline for `task`; `context` must outlive it.
std::unique_ptr<CandidateEvaluator> MakeCpuCandidateEvaluator(const Task& task, const CpuContext& context,
                                                              EvalOptions options);

/// The CUDA pipeline for `task`; `context` must outlive it. Evaluations run on the calling
/// thread (the sandboxed workers are tied to the thread that starts them).
std::unique_ptr<CandidateEvaluator> MakeCudaCandidateEvaluator(const Task& task, CudaContext& context,
                                                               EvalOptions options);

}  // namespace ksmith
