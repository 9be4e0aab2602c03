#include "eval/timing_driver.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "eval/reuse_check.h"
#include "eval/statistics.h"
#include "sandbox/timing_loop.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kOverheadProbes = 21;
constexpr size_t kMinRoundsForInterval = 10;
constexpr size_t kReuseSamples = 5;
constexpr uint64_t kReuseEvery = 4;
constexpr uint64_t kReuseSalt = 0x2e05e;
// Refresh rounds of the inputs moved mid-round: far from any round's own refresh, so that no
// later round of the set sees inputs the baseline has answered.
constexpr size_t kMovedInputsRound = size_t{1} << 40;
constexpr size_t kRenewedInputsRound = size_t{2} << 40;  // a set renewed before a round on fresh inputs
constexpr auto kSetupTimeout = milliseconds(60'000);
constexpr auto kCheckTimeout = milliseconds(30'000);
constexpr double kTamperRelative = 0.2;  // of the candidate's median time
constexpr double kTamperAbsoluteUs = 50;
// A candidate's in-process clock reading short is evidence, not a gain (each sample is the larger
// of the two clocks), so it convicts only past what an honest call shows: an honest KernelBench
// extension's call (a serial loop of 40 us through the Python runner) read 50-64 us short of the
// evaluator's clock in 2 of 5 verdicts on an idle 2-core VM, each time in every attempt of that
// worker. Timer changes that matter are milliseconds (the red team's: 40 ms and up).
constexpr double kShortClockAbsoluteUs = 150;

double RelativeStandardError(const std::vector<double>& samples) {
  const double n = static_cast<double>(samples.size());
  if (n < 2) return INFINITY;
  double mean = 0;
  for (double sample : samples) mean += sample;
  mean /= n;
  double variance = 0;
  for (double sample : samples) variance += (sample - mean) * (sample - mean);
  variance /= n - 1;
  return mean > 0 ? std::sqrt(variance / n) / mean : INFINITY;
}

double Median(std::vector<double> values) { return MedianWithInterval(std::move(values)).median; }

// Where a round's two times go.
enum class Sample { kTimed, kReused, kPairFresh, kPairReused, kDiscarded };

class Driver {
 public:
  Driver(WorkerProcess& worker, const TimingSettings& settings, std::string* error)
      : worker_(worker), settings_(settings), answered_(settings.sets, false), error_(error) {}

  // One timed request: returns {outer, inner} in microseconds.
  std::optional<std::pair<double, double>> Call(const std::string& target, size_t set, size_t round,
                                                bool tweak) {
    Message request;
    request.header = {{"type", "time_call"}, {"target", target}, {"set", set}, {"round", round},
                      {"tweak", tweak}};
    const auto start = Clock::now();
    auto reply = worker_.Request(request, "timed", settings_.call_timeout + milliseconds(2000),
                                 fmt::format("timing the {} (round {})", target, round));
    const double outer_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (!Accept(reply)) return std::nullopt;
    // A side whose outputs torch wrote copies them into ksmith's buffers now, untimed.
    if (finishes_.contains(target)) {
      Message finish;
      finish.header = {{"type", "time_finish"}, {"target", target}};
      if (!Accept(worker_.Request(finish, "finished", settings_.call_timeout + milliseconds(2000),
                                  fmt::format("copying the {}'s outputs (round {})", target, round)))) {
        return std::nullopt;
      }
    }
    return std::pair{outer_us, reply->header.value("inner_ns", 0.0) / 1000.0};
  }

  bool Accept(const std::optional<Message>& reply) {
    if (!reply) return false;
    if (reply->type() == "error") {
      *error_ = reply->header.value("message", std::string("worker error"));
      return false;
    }
    // The candidate's Python raised in a call (the worker still runs): timing ends here.
    if (const auto raised = reply->header.find("candidate_raised"); raised != reply->header.end()) {
      raised_ = *raised;
      return false;
    }
    return true;
  }

  const std::optional<nlohmann::json>& raised() const { return raised_; }

  std::optional<TimingOutcome> Run(int inputs_fd) {
    TimingOutcome outcome;
    outcome.worker_clock = settings_.worker_clock;
    const auto setup_start = Clock::now();
    Message setup;
    setup.header = settings_.bench;
    setup.header["type"] = "time_setup";
    setup.header["spare_set"] = settings_.spare_set;  // the plan's second sides run there
    auto ready = worker_.Request(setup, "time_ready", kSetupTimeout + 2 * settings_.call_timeout,
                                 "setting up timing", inputs_fd);
    if (!Accept(ready)) return std::nullopt;
    for (const char* side : {"candidate", "baseline"}) {
      if (ready->header.contains("finish") && ready->header["finish"].value(side, false)) finishes_.insert(side);
    }
    std::vector<double> empty_us;
    for (int i = 0; i < kOverheadProbes; ++i) {
      auto call = Call("none", 0, 0, false);
      if (!call) return std::nullopt;
      empty_us.push_back(call->first);
    }
    outcome.overhead_us = Median(empty_us);
    outcome.setup_s = std::chrono::duration<double>(Clock::now() - setup_start).count();

    const auto loop_start = Clock::now();
    // Every timed call sees inputs no call saw: a set gets new inputs after its round. But, in
    // secret, about one round in kReuseEvery leaves its set as it is, and the set's next round
    // changes only a few elements: those rounds are the samples on barely changed inputs
    // (ReuseTimes, eval/reuse_check.h), taken among the others so that load on the machine
    // touches both kinds alike.
    std::vector<bool> reuse_next(settings_.sets, false);
    size_t round = 0;
    for (; round < settings_.max_rounds; ++round) {
      const size_t set = round % settings_.sets;
      const bool reuse = reuse_next[set];
      reuse_next[set] = MixCounter(settings_.order_seed, kReuseSalt, round) % kReuseEvery == 0;
      if (!TimeRound(outcome, round, set, reuse, !reuse_next[set], reuse ? Sample::kReused : Sample::kTimed)) {
        return std::nullopt;
      }
      if (outcome.mismatch) {
        outcome.stopped_by = "mismatch";
        break;
      }
      const double elapsed_s = std::chrono::duration<double>(Clock::now() - loop_start).count();
      const size_t rounds = outcome.candidate_us.size();
      const bool enough = rounds >= settings_.min_rounds && elapsed_s >= settings_.min_time_s &&
                          outcome.candidate_reuse_us.size() >= kReuseSamples;
      // Either side's own noise is small, or the paired speedup is already pinned down: its 95%
      // interval spans no more than twice the target (drift that moves both sides cancels there).
      const Estimate speedup = PairedSpeedup(outcome.baseline_us, outcome.candidate_us);
      const bool pinned = rounds >= kMinRoundsForInterval && speedup.median > 0 &&
                          (speedup.high - speedup.low) <= 2 * settings_.target_rse * speedup.median;
      const bool quiet = pinned || (RelativeStandardError(outcome.candidate_us) <= settings_.target_rse &&
                                    RelativeStandardError(outcome.baseline_us) <= settings_.target_rse);
      // The question a verdict answers is already answered: more rounds would only narrow the
      // interval around a comparison that cannot change.
      const bool decided = rounds >= kMinRoundsForInterval && ComparisonDecided(speedup, settings_.tie_band);
      if (enough && decided) {
        outcome.stopped_by = "decided";
        break;
      }
      if (enough && quiet) {
        outcome.stopped_by = "interval";
        break;
      }
      if (elapsed_s >= settings_.budget_s && rounds >= settings_.min_rounds) {
        outcome.stopped_by = "budget";
        break;
      }
    }
    // A budget spent before enough samples on barely changed inputs: each set once more as it is,
    // then rounds that change a few elements, until there are enough.
    if (!outcome.mismatch && outcome.candidate_reuse_us.size() < kReuseSamples) {
      for (size_t j = 0; j < settings_.sets; ++j) {
        ++round;
        if (!TimeRound(outcome, round, round % settings_.sets, false, false, Sample::kDiscarded)) return std::nullopt;
      }
      while (!outcome.mismatch && outcome.candidate_reuse_us.size() < kReuseSamples) {
        ++round;
        if (!TimeRound(outcome, round, round % settings_.sets, true, false, Sample::kReused)) return std::nullopt;
      }
    }
    if (!outcome.mismatch && Suspect(outcome) && !ConfirmReuse(outcome, round)) return std::nullopt;
    outcome.loop_s = std::chrono::duration<double>(Clock::now() - loop_start).count();
    ksmith::CrossCheckClocks(outcome);
    return outcome;
  }

 private:
  static bool Suspect(const TimingOutcome& outcome) {
    return SuspectReuse({Median(outcome.candidate_us), outcome.candidate_reuse_us},
                        {Median(outcome.baseline_us), outcome.baseline_reuse_us});
  }

  // Back-to-back pairs on each set in turn: fresh inputs, then the same set with a few elements
  // changed, then new inputs for the set's next pair. Every set is renewed first, since the
  // rounds before may have left it as it was.
  bool ConfirmReuse(TimingOutcome& outcome, size_t& round) {
    for (size_t set = 0; set < settings_.sets; ++set) {
      if (!TimeRound(outcome, ++round, set, false, true, Sample::kDiscarded)) return false;
    }
    for (size_t pair = 0; pair < kReuseConfirmPairs && !outcome.mismatch; ++pair) {
      const size_t set = pair % settings_.sets;
      if (!TimeRound(outcome, ++round, set, false, false, Sample::kPairFresh)) return false;
      if (!TimeRound(outcome, ++round, set, true, true, Sample::kPairReused)) return false;
    }
    return true;
  }

  // Untimed: the worker gives `set` new inputs (the refresh numbered `refresh_round`) and drops
  // it from the caches.
  bool Refresh(size_t set, size_t refresh_round) {
    Message request;
    request.header = {{"type", "time_refresh"}, {"set", set}, {"refresh_round", refresh_round}};
    return Accept(worker_.Request(request, "refreshed", kCheckTimeout, "giving a timing set new inputs"));
  }

  // Untimed: the worker writes `set`'s inputs back as they are and drops it from the caches.
  bool Rewrite(size_t set) {
    Message request;
    request.header = {{"type", "time_refresh"}, {"set", set}, {"rewrite", true}};
    return Accept(worker_.Request(request, "refreshed", kCheckTimeout, "rewriting a timing set's inputs"));
  }

  // Untimed: the worker's core forgets the branches of the calls before (ScrubBranchPredictors).
  bool Scrub() {
    Message request;
    request.header = {{"type", "time_scrub"}};
    return Accept(worker_.Request(request, "scrubbed", kCheckTimeout, "scrubbing the branch predictors"));
  }

  // Untimed: the worker drops `set` from the caches.
  bool Evict(size_t set) {
    Message request;
    request.header = {{"type", "time_evict"}, {"set", set}};
    return Accept(worker_.Request(request, "evicted", kCheckTimeout, "evicting a timing set from the caches"));
  }

  // Times both sides, in a secret order, on `set`, and checks the candidate's output against the
  // baseline's (PlanRound). `tweak`: a few elements of the set change first. `refresh`: the set
  // gets new inputs afterwards. `sample`: where the two times go.
  bool TimeRound(TimingOutcome& outcome, size_t round, size_t set, bool tweak, bool refresh, Sample sample) {
    const bool candidate_first = (MixCounter(settings_.order_seed, 0x0de5, round) & 1) == 0;
    // A round on fresh inputs gets them: a set its last round left as it was holds inputs the
    // baseline has answered.
    if (!tweak && answered_.at(set) && !Refresh(set, kRenewedInputsRound + round)) return false;
    // Samples on barely changed inputs: what the branch predictors remember of the calls before
    // must not pass for what the kernel remembers.
    if (tweak && !Scrub()) return false;
    answered_.at(set) = !refresh;
    bool first_call = true;  // a tweak changes the set before the round's first call
    for (const RoundStep step : PlanRound(candidate_first, tweak, settings_.spare_set, evict_between_sides_)) {
      const size_t where = step.spare ? settings_.sets : set;
      switch (step.kind) {
        case RoundStep::kEvict:
          if (!Evict(where)) return false;
          continue;
        case RoundStep::kMoveInputs:
          if (!Refresh(where, kMovedInputsRound + round)) return false;
          continue;
        case RoundStep::kRewriteInputs:
          if (!Rewrite(where)) return false;
          continue;
        case RoundStep::kCheck:
          if (!Check(outcome, where, round)) return false;
          continue;
        default:
          break;
      }
      const bool candidate = step.kind == RoundStep::kCandidate || step.kind == RoundStep::kCandidateUntimed;
      auto call = Call(candidate ? "candidate" : "baseline", where, round, first_call && tweak);
      first_call = false;
      if (!call) return false;
      if (step.kind == RoundStep::kBaselineUntimed || step.kind == RoundStep::kCandidateUntimed) continue;
      // The evaluator's clock, less the request's own cost; for calls shorter than the noise in
      // that cost, never below what the worker's clock saw (a candidate cannot look faster this
      // way: shrinking the worker's clock only makes the outside time count).
      const double time_us = settings_.worker_clock ? call->second : std::max(call->first - outcome.overhead_us, call->second);
      switch (sample) {
        case Sample::kTimed:
          (candidate ? outcome.candidate_us : outcome.baseline_us).push_back(time_us);
          (candidate ? outcome.candidate_inner_us : outcome.baseline_inner_us).push_back(call->second);
          (candidate ? outcome.candidate_outer_us : outcome.baseline_outer_us).push_back(call->first);
          break;
        case Sample::kReused:
          (candidate ? outcome.candidate_reuse_us : outcome.baseline_reuse_us).push_back(time_us);
          break;
        case Sample::kPairFresh:
          (candidate ? outcome.candidate_pair_fresh_us : outcome.baseline_pair_fresh_us).push_back(time_us);
          break;
        case Sample::kPairReused:
          (candidate ? outcome.candidate_pair_reused_us : outcome.baseline_pair_reused_us).push_back(time_us);
          break;
        case Sample::kDiscarded:
          break;
      }
    }
    // New inputs for the set's next round, now that this one is done, untimed and long before the
    // set is used again; in any case the set out of the caches.
    return refresh ? Refresh(set, round) : Evict(set);
  }

  // Untimed: the worker compares the candidate's outputs of `set` with the baseline's.
  bool Check(TimingOutcome& outcome, size_t set, size_t round) {
    Message check;
    check.header = {{"type", "time_check"}, {"set", set}};
    auto checked = worker_.Request(check, "checked", kCheckTimeout, "checking a timed output");
    if (!Accept(checked)) return false;
    if (!checked->header.value("passed", false)) {
      outcome.mismatch = fmt::format("round {}: {}", round, checked->header.value("description", std::string()));
    }
    return true;
  }

  WorkerProcess& worker_;
  const TimingSettings& settings_;
  std::vector<bool> answered_;  // per set: left as it was by its last round, the baseline's answer in memory
  std::string* error_;
  std::optional<nlohmann::json> raised_;  // what the candidate raised, where a reply said
  std::set<std::string> finishes_;  // the sides with a ksmith_finish
  // The worker runs on this machine: where its CPU cannot evict, the request would do nothing.
  const bool evict_between_sides_ = CanEvictFromCaches();
};

}  // namespace

void CrossCheckClocks(TimingOutcome& outcome) {
  if (outcome.mismatch || outcome.candidate_us.empty()) return;
  auto gaps = [](const std::vector<double>& outer, const std::vector<double>& inner) {
    std::vector<double> gap;
    for (size_t i = 0; i < outer.size() && i < inner.size(); ++i) gap.push_back(outer[i] - inner[i]);
    return Median(gap);
  };
  // The request encloses the call: the worker's clock can never see more time than the evaluator's
  // around it. A side whose median call did is timed by a clock something in the worker moved.
  for (const auto& [side, outer, inner] : {std::tuple{"candidate", &outcome.candidate_outer_us, &outcome.candidate_inner_us},
                                           std::tuple{"baseline", &outcome.baseline_outer_us, &outcome.baseline_inner_us}}) {
    const double long_by = -gaps(*outer, *inner);
    if (!outer->empty() && long_by > kTamperAbsoluteUs) {
      outcome.clock_ran_long = true;
      outcome.tampering = fmt::format(
          "the worker's clock saw the {} take {:.1f} us more than the whole request around it took on the "
          "evaluator's clock: the in-process timer was changed",
          side, long_by);
      return;
    }
  }
  // The gap between the two clocks is the request's cost, the same for both sides; a candidate
  // whose in-process time is much shorter than the evaluator saw has changed the worker's clock.
  const double candidate_gap =
      gaps(outcome.worker_clock ? outcome.candidate_outer_us : outcome.candidate_us, outcome.candidate_inner_us);
  const double baseline_gap =
      gaps(outcome.worker_clock ? outcome.baseline_outer_us : outcome.baseline_us, outcome.baseline_inner_us);
  const double allowed = std::max(kShortClockAbsoluteUs, kTamperRelative * Median(outcome.candidate_us));
  outcome.clock_gap_excess_us = candidate_gap - baseline_gap;
  // The worker's clock as the samples is a device's own (a GPU's events), which the candidate's
  // code, running on the device, cannot reach: a candidate's larger gap there is the host's cost
  // of its launches (measured on the H200: an honest grid-stride gelu's gap 170 us above the
  // baseline's), never a changed timer. The long clock above still holds.
  if (outcome.worker_clock) return;
  if (candidate_gap - baseline_gap > allowed) {
    outcome.tampering = fmt::format(
        "the worker's clock saw the candidate take {:.1f} us less than the evaluator's clock did "
        "(the baseline: {:.1f} us): the candidate changed the in-process timer",
        candidate_gap, baseline_gap);
  }
}

std::vector<RoundStep> PlanRound(bool candidate_first, bool tweak, bool spare_set, bool evict_between_sides) {
  using enum RoundStep::Kind;
  if (tweak) {
    // On barely changed inputs the candidate goes first: after the baseline it would find the
    // exact answer; before, only the set's last answer, stale where the inputs changed, which is
    // what the reuse samples are for. The second side must not find the set in the caches where
    // the first left it: a memory-bound kernel would read faster than memory allows. The secret
    // bit still decides which side ends the round.
    std::vector<RoundStep> steps = {{kCandidate}};
    if (evict_between_sides) steps.push_back({kEvict});
    steps.insert(steps.end(), {{kBaseline}, {kCheck}});
    if (candidate_first) steps.push_back({kCandidateUntimed});
    return steps;
  }
  // Both orders alike: the second side runs on inputs just given to its set (a side that runs
  // second on the inputs the first just read is about 4% faster on the 2-core VM, and a first
  // version of this plan that moved the inputs in one order only made the unchanged KernelBench
  // model read 2-3% slower than itself), and the untimed candidate call last ends a
  // candidate-first round with the candidate, as a baseline-first round ends with the baseline.
  if (spare_set) {
    if (candidate_first) {
      return {{kCandidate}, {kMoveInputs, true}, {kBaseline, true}, {kBaselineUntimed}, {kCheck}, {kCandidateUntimed}};
    }
    // The candidate's untimed call (on the round's set, which only the baseline's answer makes
    // useless to it) matches the other order's: each side runs twice a round, in either order.
    return {{kBaseline}, {kMoveInputs, true}, {kCandidate, true}, {kCandidateUntimed}, {kBaselineUntimed, true},
            {kCheck, true}};
  }
  if (candidate_first) return {{kCandidate}, {kRewriteInputs}, {kBaseline}, {kCheck}, {kCandidateUntimed}};
  return {{kBaseline}, {kMoveInputs}, {kCandidate}, {kBaselineUntimed}, {kCheck}};
}

std::optional<TimingOutcome> DriveTiming(WorkerProcess& worker, const TimingSettings& settings,
                                         int inputs_fd, std::string* error) {
  Driver driver(worker, settings, error);
  auto outcome = driver.Run(inputs_fd);
  if (!outcome && driver.raised()) {
    outcome.emplace();
    outcome->candidate_raised = driver.raised();
    outcome->stopped_by = "candidate raised";
  }
  return outcome;
}

}  // namespace ksmith
