// The hypotheses ledger: the optimization ideas a run has tried (tile the K loop, vectorize the
// loads, fuse the epilogue...), each with the kernels that tried it and what they measured. An
// idea whose kernels stop improving on its best for a few rounds is set aside, so that the search
// tries another (K-Search's lesson: switch when progress stalls); an idea that once worked and
// whose kernel broke is kept, so that its best kernel is built on rather than dropped.
//
// Read from the run's attempts (each records its idea in CandidateRecord::search "hypothesis"), so
// that a resumed run and `runs show` see the same ledger.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/strategy.h"

namespace ksmith {

struct Hypothesis {
  std::string name;
  std::string status = "trying";  // "trying", "set aside" (stalled), "broken" (never passed), "kept" (broke after working)
  std::string why;                // for a status other than "trying"
  std::vector<int64_t> kernels;   // candidate numbers, in order
  std::optional<double> best_speedup;
  int64_t best_candidate = 0;     // its fastest passing kernel's number
  std::optional<size_t> best_attempt;  // ...its index in the run's attempts
  int rounds_without_gain = 0;    // passing kernels since its best improved
  int failures_in_row = 0;

  bool active() const { return status == "trying" || status == "kept"; }
};

struct LedgerRules {
  int stall_rounds = 2;          // passing kernels without a gain before an idea is set aside
  int failures_to_break = 3;     // failures in a row (a kernel and its repairs) before an idea is broken
  double gain_ratio = 1.02;      // an improvement smaller than this is not a gain (timing noise)
};

class HypothesisLedger {
 public:
  static HypothesisLedger FromRun(const RunState& state, LedgerRules rules = {});

  const std::vector<Hypothesis>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  /// The entry of that name (as ParseHypothesis wrote it), or null.
  const Hypothesis* Find(const std::string& name) const;

  nlohmann::json ToJson() const;
  /// One line per idea, for prompts, `runs show` and report.md.
  std::string Render() const;

 private:
  std::vector<Hypothesis> entries_;
};

/// The idea an attempt tried (its search's "hypothesis"), or empty.
std::string HypothesisOf(const Attempt& attempt);

}  // namespace ksmith
