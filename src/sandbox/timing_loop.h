// Timing candidate against baseline inside the worker, interleaved in one process.
//
// Rotating input sets whose total exceeds the last-level cache keep every call cold. Before each
// round a few input elements of the set change, so no call ever sees inputs it has seen before,
// and every timed candidate output is checked against the baseline's output for the same inputs:
// a kernel that caches, counts calls, or skips work when timed is caught in the act.
#pragma once

#include <nlohmann/json.hpp>

#include "backend/cpu/shared_library.h"
#include "sandbox/layout.h"
#include "tensor/random.h"

namespace ksmith {

/// Bytes of input data for `sets` rounds of `layout`: per set, each input tensor in slot order.
size_t TimingInputBytes(const CaseLayout& layout, size_t sets);

/// Fills the timing inputs. The evaluator does this ahead of time, while correctness runs, in
/// memory it then shares with the worker.
void FillTimingInputs(const CaseLayout& layout, size_t sets, Distribution distribution,
                      uint64_t seed, float* inputs);

/// `request` holds the layout (see CaseLayout), "sets", "seed", "distribution", "mutations",
/// "min_rounds", "max_rounds", "min_time_s", "max_time_s", "target_rse", and "tolerance"
/// {norm, elem, epsilon, accumulation}; `inputs` is TimingInputBytes long. Returns
/// {candidate_ns, baseline_ns, rounds, sets, setup_s, loop_s, mismatch?}.
nlohmann::json RunTimingLoop(const nlohmann::json& request, float* inputs, KernelEntry candidate,
                             KernelEntry baseline);

}  // namespace ksmith
