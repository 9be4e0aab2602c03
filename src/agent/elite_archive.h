// MAP-Elites: the best passing kernel of each cell of a feature grid (agent/kernel_features.h).
// A kernel is kept when it beats the one in its cell, so the archive holds the fastest kernel of
// every kind the search has found, not only the fastest overall: a slower kernel of a new kind
// (tensor cores, shared memory) survives to be improved instead of losing to the current best.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/kernel_features.h"
#include "agent/strategy.h"

namespace ksmith {

struct Elite {
  size_t attempt_index = 0;  // into RunState::attempts
  int64_t number = 0;        // the candidate's number in its run
  double speedup = 0;
  KernelFeatures features;
};

class EliteArchive {
 public:
  /// Offers a judged attempt: kept when it passed, was timed and is faster than its cell's elite
  /// (a tie keeps the earlier one). Returns whether it was kept.
  bool Offer(const Attempt& attempt, size_t attempt_index);
  /// Keeps `elite` (another island's, migrating) by the same rule.
  bool Offer(const Elite& elite);

  bool empty() const { return cells_.empty(); }
  size_t size() const { return cells_.size(); }
  const std::map<std::string, Elite>& cells() const { return cells_; }
  /// The fastest elite; null when the archive is empty.
  const Elite* Best() const;
  /// Every elite, fastest first.
  std::vector<const Elite*> Ranked() const;

  /// [{"cell", "candidate", "speedup", "features"}], fastest first: for reports and the store.
  nlohmann::json ToJson() const;

 private:
  std::map<std::string, Elite> cells_;
};

/// Whether a search placed the run's candidates (evolve): its reports then show the archive.
bool HasSearchPlacements(const RunState& state);

/// The archive of every island together: each passing attempt offered in order.
EliteArchive ArchiveOf(const RunState& state);

/// Where a search placed a candidate, for progress lines and reports: "generation 2, island 1,
/// crossover of 3 and 6"; empty when the strategy records no placement.
std::string DescribePlacement(const nlohmann::json& search);

/// Why the run's best kernel is faster than its first: what changed in its knobs and in its
/// measured features, one item per line ("SIMDLEN 8 -> 16", "vector arithmetic: 256-bit ->
/// 512-bit"); empty when the best is the first, or either is missing.
std::vector<std::string> WhyFaster(const Attempt& first, const Attempt& best);

}  // namespace ksmith
