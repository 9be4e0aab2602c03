// The verification stages every session runs the same way, whatever its device: written once,
// each called from a session's RunStage (eval/stage_driver.h). The physical limit is
// eval/physical_limit.h's.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/cases.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "sandbox/supervisor.h"
#include "task/task.h"

namespace ksmith {

/// The process-state stage: asks the candidate's `worker` for its state report, gives the verdict
/// the report's labels (StateReportLabels, after `adjust` where set: what the session knows
/// better than the worker's report) and fails for any process-wide state the candidate changed
/// (integrity_violation, each change listed). `unchanged` is the stage's summary when it passes.
bool RunStateReportStage(VerdictRecorder& recorder, WorkerProcess& worker, std::chrono::milliseconds timeout,
                         const std::string& unchanged, const std::function<void(nlohmann::json&)>& adjust = {});

/// The hidden-shapes stage, a property (CheckHiddenShapes) where the format's hidden shapes do not
/// decide; nothing where they do (they ran in correctness). `run_case` runs one case on the
/// session's device and judges it. Returns whether the session can go on: false where the
/// candidate's worker is gone.
bool RunHiddenShapesStage(VerdictRecorder& recorder, const Task& task, const EvalOptions& options, uint64_t secret_seed,
                          const std::function<bool(StageRecord& stage, const CaseSpec& spec)>& run_case,
                          const std::function<bool(const StageRecord& stage)>& can_go_on);

}  // namespace ksmith
