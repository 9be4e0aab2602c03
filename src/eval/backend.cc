#include "eval/backend.h"

namespace ksmith {

void EvalBackend::Profile(Verdict& verdict, const Task&) const {
  StageRecord stage;
  stage.name = StageName(StageId::kProfile);
  stage.outcome = "ok";
  stage.details.summary = "not profiled: the " + traits().name + " backend has no profiler";
  verdict.stages.push_back(std::move(stage));
}

}  // namespace ksmith
