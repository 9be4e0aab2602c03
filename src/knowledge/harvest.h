// Experience harvested from a finished run into the knowledge base: its winning kernel with what
// was measured of it and why it beat the first correct one, and its failures of each kind with
// what the verdict said and what fixed them. The best kernel's note has origin "run:<run_id>#best",
// a failure's "run:<run_id>#<candidate>", so that harvesting a run again replaces its notes
// instead of adding them twice.
#pragma once

#include <string>
#include <vector>

#include "agent/strategy.h"
#include "store/knowledge_store.h"
#include "store/run_store.h"

namespace ksmith {

/// At most one note for the best kernel and one per kind of failure (at most three).
/// `hardware` is what the notes say of where they apply (retrieval's NoteHardware).
std::vector<KnowledgeNote> HarvestRun(const RunRecord& run, const RunState& state, const std::string& category,
                                      const std::string& hardware);

/// Puts the run's notes into the store; how many were new or changed.
Result<size_t> HarvestInto(KnowledgeStore& store, const RunRecord& run, const RunState& state,
                           const std::string& category, const std::string& hardware);

}  // namespace ksmith
