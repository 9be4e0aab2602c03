// Timing candidate against baseline inside the worker, interleaved in one process.
//
// Rotating input sets whose total exceeds the last-level cache keep every call cold. Before each
// round a few input elements of the set change, so no call ever sees inputs it has seen before,
// and every timed candidate output is checked against the baseline's output for the same inputs:
// a kernel that caches, counts calls, or skips work when timed is caught in the act.
#pragma once

#include <nlohmann/json.hpp>

#include "backend/cpu/shared_library.h"

namespace ksmith {

/// `request` holds the layout (see CaseLayout), "sets", "seed", "distribution", "mutations",
/// "min_rounds", "max_rounds", "min_time_s", "max_time_s", "target_rse", and "tolerance"
/// {norm, elem, epsilon, accumulation}. Returns {candidate_ns, baseline_ns, rounds, mismatch?}.
nlohmann::json RunTimingLoop(const nlohmann::json& request, KernelEntry candidate,
                             KernelEntry baseline);

}  // namespace ksmith
