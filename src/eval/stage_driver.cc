#include "eval/stage_driver.h"

namespace ksmith {

StageKind KindOf(StageId stage) {
  switch (stage) {
    case StageId::kTiming:
    case StageId::kRecheck:
    case StageId::kPhysicalLimit:
      return StageKind::kTimed;
    case StageId::kHiddenShapes:
      return StageKind::kProperty;
    case StageId::kSecondTiming:
      return StageKind::kTimedProperty;
    default:
      return StageKind::kDeciding;
  }
}

bool DriveStages(const StagePlan& plan, StageRunner& runner, bool timed) {
  for (const StageId stage : plan) {
    const StageKind kind = KindOf(stage);
    if (!timed && (kind == StageKind::kTimed || kind == StageKind::kTimedProperty)) continue;
    if (runner.RunStage(stage)) continue;
    // A property that cannot go on ends the session: what it found is in its stage.
    return kind == StageKind::kProperty || kind == StageKind::kTimedProperty;
  }
  return true;
}

}  // namespace ksmith
