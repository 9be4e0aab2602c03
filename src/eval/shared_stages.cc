#include "eval/shared_stages.h"

#include <vector>

#include "core/clock.h"
#include "eval/pipeline_steps.h"
#include "sandbox/protocol.h"

namespace ksmith {

bool RunStateReportStage(VerdictRecorder& recorder, WorkerProcess& worker, std::chrono::milliseconds timeout,
                         const std::string& unchanged, const std::function<void(nlohmann::json&)>& adjust) {
  auto& stage = recorder.Stage(StageId::kProcessState);
  const auto start = SteadyClock::now();
  Message request;
  request.header = {{"type", "state_report"}};
  auto reply = worker.Request(request, "state", timeout, "reading the process state");
  stage.seconds = SecondsSince(start);
  if (!reply) return FinishWorkerFailure(recorder, stage, worker);
  nlohmann::json report = reply->header;
  if (adjust) adjust(report);
  Verdict& verdict = recorder.verdict();
  for (auto& label : StateReportLabels(report)) verdict.labels.push_back(std::move(label));
  const auto changes = reply->header.value("changes", std::vector<std::string>{});
  if (!changes.empty()) {
    stage.details.violations = changes;
    return recorder.Finish(stage, VerdictStatus::kIntegrityViolation, ProcessStateReason(changes),
                           FailureKind::kProcessStateChanged);
  }
  stage.details.summary = unchanged;
  return true;
}

bool RunHiddenShapesStage(VerdictRecorder& recorder, const Task& task, const EvalOptions& options, uint64_t secret_seed,
                          const std::function<bool(StageRecord& stage, const CaseSpec& spec)>& run_case,
                          const std::function<bool(const StageRecord& stage)>& can_go_on) {
  if (options.hidden_shapes_decide) return true;
  const auto start = SteadyClock::now();
  auto& stage = recorder.Stage(StageId::kHiddenShapes);
  CheckHiddenShapes(recorder, stage, PlanGeneralizationCases(task, secret_seed),
                    [&](const CaseSpec& spec) { return run_case(stage, spec); });
  stage.seconds = SecondsSince(start);
  return can_go_on(stage);
}

}  // namespace ksmith
