// The one order of a verification session's stages, and what a stage's outcome ends. A backend's
// session declares its stages (StagePlan) and runs each one on its device (StageRunner); the
// driver decides which run, and when a failure ends the evaluation. What a stage is belongs to
// the stage (KindOf), not to a backend: the timing stages are left out of an evaluation without
// timing, and a property stage (the hidden shapes, the second baseline's timing) that cannot go
// on ends the session without failing the verdict, whatever backend runs it.
#pragma once

#include <vector>

#include "eval/stage_id.h"

namespace ksmith {

enum class StageKind {
  kDeciding,  // a failure decides the verdict
  kTimed,     // deciding, and run only where the evaluation times
  kProperty,  // recorded, never deciding: its false ends the session, the verdict still passes
  kTimedProperty,
};

/// What kind of stage `stage` is.
StageKind KindOf(StageId stage);

/// A session's stages in the order they run. Declared by the backend's session from its options
/// (a CUDA session reads the process state only of a candidate that brings its own Python).
using StagePlan = std::vector<StageId>;

/// The backend's side: runs one stage of its plan.
class StageRunner {
 public:
  virtual ~StageRunner() = default;
  /// Runs `stage`, recording it. Returns false where it decided the verdict (a deciding stage)
  /// or where nothing after it can run (a property stage: its worker is gone).
  virtual bool RunStage(StageId stage) = 0;
};

/// Runs `plan` on `runner`, leaving out the timed stages unless `timed`. Returns whether the
/// candidate passed every deciding stage that ran.
bool DriveStages(const StagePlan& plan, StageRunner& runner, bool timed);

}  // namespace ksmith
