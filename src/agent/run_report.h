// The Markdown report of a run: what ran, why it stopped, the best kernel and its verdict, and
// every attempt in order. Written next to the best kernel at the end of `ksmith optimize`.
#pragma once

#include <string>

#include "agent/strategy.h"
#include "store/run_store.h"

namespace ksmith {

/// How the run's fastest correct kernel stands against the baseline: "" when it beat it (its
/// speedup's interval lies above 1) or was not timed; otherwise "slower than the baseline
/// (0.69x)" or "not measurably faster than the baseline (1.01x, interval 0.98-1.04)".
std::string ShortOfBaseline(const Attempt& best);

/// "2 of 5 model calls were retried: HTTP 429 (2 times), timed out (1 time)"; empty when none was.
std::string RetrySummary(const std::vector<LlmCallRecord>& calls);

/// `best_path`: where the best kernel was written (empty when nothing passed). `calls`: the
/// run's model calls, for the retries.
std::string RenderRunReport(const RunRecord& run, const RunState& state, const std::string& best_path,
                            const std::vector<LlmCallRecord>& calls = {});

}  // namespace ksmith
