#include "eval/failed_case.h"

#include <utility>

namespace ksmith {

void FailedCaseKeeper::Keep(const Task& task, const CaseSpec& spec, const PreparedCase& prepared,
                            std::string_view snapshot, const CaseCheck& check) {
  if (!sink_ || kept_ || check.problem != CaseProblem::kWrongOutput) return;
  if (snapshot.size() != prepared.layout.SnapshotBytes()) return;  // judged malformed, never wrong
  FailedCase failed{task, spec, prepared.layout, CaseShape(task, prepared.layout), prepared.inputs, {},
                    prepared.expected, 0, seeds_};
  // The snapshot holds [guard | tensor | guard] per slot; only the outputs' tensors are kept.
  const size_t guard = prepared.layout.guard_bytes;
  size_t offset = 0;
  for (const TensorSlot& slot : prepared.layout.tensors) {
    if (slot.output) failed.outputs.append(snapshot.substr(offset + guard, slot.bytes));
    offset += slot.bytes + 2 * guard;
  }
  kept_ = std::move(failed);
}

void FailedCaseKeeper::Deliver(const Verdict& verdict, uint64_t evaluation_seed) {
  if (delivered_ || !kept_ || verdict.status != VerdictStatus::kWrongOutput) return;
  delivered_ = true;
  kept_->evaluation_seed = evaluation_seed;
  sink_(*kept_);
}

}  // namespace ksmith
