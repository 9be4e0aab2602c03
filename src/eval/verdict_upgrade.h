// Verdicts written before schema version 3 stated what failed only in words: the case in a
// label, the mismatch numbers, the signal and the CUDA error in the reason, the compiler's errors
// in the log. The run store keeps such verdicts, and resuming a run turns them into feedback
// again, so Verdict::FromJson fills the typed fields from those words, here and only here: a
// verdict of version 3 or later is never parsed.
#pragma once

#include "eval/verdict.h"

namespace ksmith {

/// Fills the failed stage's Failure (kind, case, mismatch, signal, CUDA error name) and the build
/// stage's diagnostics from the reason and the log, where the verdict does not already have them.
void UpgradeOldVerdict(Verdict& verdict);

}  // namespace ksmith
