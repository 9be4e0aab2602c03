// The Markdown report of a run: what ran, why it stopped, the best kernel and its verdict, and
// every attempt in order. Written next to the best kernel at the end of `ksmith optimize`.
#pragma once

#include <string>

#include "agent/strategy.h"
#include "store/run_store.h"

namespace ksmith {

/// `best_path`: where the best kernel was written (empty when nothing passed).
std::string RenderRunReport(const RunRecord& run, const RunState& state, const std::string& best_path);

}  // namespace ksmith
