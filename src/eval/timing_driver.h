// The evaluator's side of timing: it drives the worker's TimingBench one call at a time and
// times each call with its own clock, from outside the process the candidate runs in.
//
// Each round rotates to the next input set, runs candidate and baseline in a random order (the
// worker drops the set from the caches between them, so neither side finds what the other
// read), then asks the worker to compare their outputs and to give the set new inputs for its
// next round (every timed call sees inputs no call saw before). Some rounds, chosen in secret
// among the others, run instead on inputs that barely changed since their set's last round, to
// show a kernel that skips work it did before; if they point to it, back-to-back pairs confirm
// or clear it. The cost of a request with no kernel call is measured first and subtracted. The
// worker's own clock is recorded too: if the candidate's in-process times fall short of this
// clock by more than the baseline's do, the candidate tampered with the worker's timer.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/layout.h"
#include "sandbox/supervisor.h"

namespace ksmith {

struct TimingSettings {
  nlohmann::json bench;  // the TimingBench request: layout, sets, seed, distribution, tolerance
  size_t sets = 1;
  bool spare_set = false;   // the worker's bench gets one more set (the driver adds "spare_set" to `bench`)
  uint64_t order_seed = 0;  // secret: decides which side goes first in each round
  size_t min_rounds = 5;
  size_t max_rounds = 2000;
  double min_time_s = 0.05;
  double budget_s = 1.0;     // stop by then, once min_rounds are done
  double target_rse = 0.01;  // stop once both sides' relative standard error is below, or the
                             // speedup's 95% interval is within +-target_rse of its median
  /// Stop once the comparison is decided: the speedup's 95% interval clear of 1 (faster or
  /// slower), or inside 1 +- tie_band (a tie). 0: only the target or the budget stops the loop.
  double tie_band = 0.0;
  std::chrono::milliseconds call_timeout{10'000};
  /// The samples are the worker's clock (a device's events), the evaluator's the cross-check
  /// (a GPU's launches and transfers are no part of a kernel's time); else the evaluator's.
  bool worker_clock = false;
};

struct TimingOutcome {
  std::vector<double> candidate_us;        // [us] evaluator's clock, request overhead removed
  std::vector<double> baseline_us;         // [us]
  std::vector<double> candidate_inner_us;  // [us] worker's clock, for the cross-check
  std::vector<double> baseline_inner_us;   // [us]
  std::vector<double> candidate_outer_us;  // [us] evaluator's clock around each timed request, whole
  std::vector<double> baseline_outer_us;   // [us]
  bool worker_clock = false;               // the samples above are the worker's clock (TimingSettings)
  double overhead_us = 0;                  // [us] median round trip of an empty request
  double setup_s = 0;                      // [s]
  double loop_s = 0;                       // [s]
  std::string stopped_by = "rounds";       // TimingFacts::stopped_by
  std::vector<double> candidate_reuse_us;  // [us] on inputs that barely changed since the set's last call
  std::vector<double> baseline_reuse_us;   // [us]
  // Taken only when the samples above point to skipped work (SuspectReuse): back-to-back pairs,
  // fresh inputs then the same set barely changed (ReuseTimes, eval/reuse_check.h).
  std::vector<double> candidate_pair_fresh_us;   // [us]
  std::vector<double> candidate_pair_reused_us;  // [us]
  std::vector<double> baseline_pair_fresh_us;    // [us]
  std::vector<double> baseline_pair_reused_us;   // [us]
  std::optional<std::string> mismatch;     // a timed output that disagreed with the baseline
  std::optional<std::string> tampering;    // the clocks disagree for the candidate only
  double clock_gap_excess_us = 0;          // [µs] how much more the candidate's clocks disagree than the baseline's
  /// The worker's clock saw a call take longer than the evaluator's request around it: impossible
  /// honestly, under any load (the request encloses the call), so never forgiven as load's.
  bool clock_ran_long = false;
  double load_clock_gap_us = 0;            // [µs] a disagreement forgiven as load's (timing_stage.cc); 0: none
  // What a KernelBench candidate's Python raised in a call of the loop (a reply's "candidate_raised");
  // the loop stopped there and nothing above is complete.
  std::optional<nlohmann::json> candidate_raised;
};

/// The two clocks' cross-check over a timing's samples, setting `tampering`, `clock_gap_excess_us`
/// and `clock_ran_long`: the candidate's in-process times shorter than the evaluator saw by more
/// than the baseline's are (50 us or a fifth of its time), or either side's in-process time
/// longer than the whole request around it (which would lengthen that side's time: the baseline's
/// would inflate the speedup).
void CrossCheckClocks(TimingOutcome& outcome);

/// One step of a timing round, in the worker, on the round's set or on the spare one.
struct RoundStep {
  enum Kind {
    kCandidate,         // the candidate's timed call
    kBaseline,          // the baseline's timed call
    kEvict,             // the set out of the caches
    kMoveInputs,        // the set gets new inputs (and leaves the caches)
    kRewriteInputs,     // the set's inputs written back as they are (and out of the caches): the
                        // memory traffic of kMoveInputs where there is no spare set
    kBaselineUntimed,   // the baseline again, untimed, on the set's inputs as they are now
    kCandidateUntimed,  // the candidate again, untimed, after the check: its output is not looked at
    kCheck,             // the candidate's outputs against the baseline's
  };
  Kind kind;
  bool spare = false;  // on the spare set (TimingSettings::spare_set), not the round's

  bool operator==(const RoundStep&) const = default;
};

/// The steps of a round whose first side is the candidate or not, on inputs just refreshed or
/// (`tweak`) barely changed since the set's last round. The baseline's answer to the inputs it
/// has run stays in the worker's memory (its output buffer beside the candidate's, the blocks
/// torch freed), where a candidate sharing the process could read it instead of computing: so the
/// candidate never runs on fresh inputs the baseline has just answered. With a spare set, the
/// second side of a fresh round runs on the spare, given new inputs just before, whichever side it
/// is, and the baseline runs again, untimed, on the candidate's inputs for the check; without
/// one, the set itself gets new inputs between the sides when the baseline went first (and the
/// same inputs written back when the candidate did). A round on barely changed inputs keeps them
/// for both sides, as it must to measure reuse, and the candidate goes first: only the set's last
/// answer is in memory then, stale where the inputs changed, and patching it is what the reuse
/// samples catch. Every round ends with either side as often.
std::vector<RoundStep> PlanRound(bool candidate_first, bool tweak, bool spare_set, bool evict_between_sides);

/// Runs the timing rounds. Returns nullopt when the worker failed (see worker.failure()), or
/// when it answered with an error, which `error` then holds; an outcome with only
/// `candidate_raised` when the candidate's Python raised.
std::optional<TimingOutcome> DriveTiming(WorkerProcess& worker, const TimingSettings& settings,
                                         int inputs_fd, std::string* error);

}  // namespace ksmith
