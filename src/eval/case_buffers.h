// Memory of judged correctness cases, kept for the cases still to be prepared.
//
// A verification draws each case's inputs into fresh memory and runs the reference into fresh
// double-precision outputs; on this 2-core VM the page faults of that memory were a third of the
// evaluator's time in a cached CPU verdict's correctness (perf, vector_add: its 8.4 M-element
// cases). A case's buffers, once judged, go back here; the next case of a similar size draws into
// them. Every byte is written again before it is read: nothing of one case reaches another.
//
// Thread-safe: cases are prepared on threads of their own while others are judged.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "eval/cases.h"

namespace ksmith {

class CaseBuffers {
 public:
  /// Keeps at most `kept` buffers of each kind (the largest): as many as cases can be prepared
  /// at once, so that memory stays bounded by a few of the largest cases.
  explicit CaseBuffers(size_t kept = 4) : kept_(kept) {}

  /// Memory for `bytes` bytes of inputs (PrepareCase's reuse_inputs): the smallest kept buffer
  /// that holds them, else the largest kept one (PrepareCase grows it), else an empty string.
  std::string TakeInputs(size_t bytes);
  /// Vectors for the reference's outputs of `elements` elements in all (ComputeExpected reuses
  /// what PreparedCase::expected holds), chosen as TakeInputs chooses.
  std::vector<std::vector<double>> TakeOutputs(size_t elements);

  /// Keeps `judged`'s inputs and expected outputs for later cases.
  void Keep(PreparedCase&& judged);

  /// Lets go of everything kept (once no case is left to prepare).
  void Clear();

  /// The bytes held now (inputs and outputs' capacities).
  size_t HeldBytes() const;

 private:
  std::vector<std::string> inputs_;                          // guarded by mutex_
  std::vector<std::vector<std::vector<double>>> outputs_;    // guarded by mutex_
  size_t kept_;
  mutable std::mutex mutex_;
};

}  // namespace ksmith
