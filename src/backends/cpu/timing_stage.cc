// The timing stages of a worker session: inputs made ahead, rounds against the baseline timed
// from outside the worker, and the physical-limit check.
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "backends/cpu/worker_session.h"
#include "core/clock.h"
#include "core/cpu_usage.h"
#include "eval/physical_limit.h"
#include "eval/pipeline_steps.h"
#include "eval/reuse_check.h"
#include "eval/timing_driver.h"
#include "sandbox/timing_loop.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;

constexpr size_t kMaxTimingBytes = size_t{2} << 30;  // all rotating sets together
constexpr size_t kMaxTimingSets = 64;
constexpr uint64_t kTimingSalt = 0x7133;
constexpr uint64_t kOrderSalt = 0x0de5;

constexpr int kTimingAttempts = 2;      // when other work disturbed the first
constexpr int kMaxTimingAttempts = 4;   // when the clocks disagreed under load
constexpr double kDisturbedCores = 0.3;  // other work, in cores' worth, that calls for a retry
// [µs] The most load alone makes the two clocks disagree by, in a disturbed attempt: a timeslice's
// wait or two. A candidate that moves the timer claims far more (the red-team's: 40 ms and up).
constexpr double kLoadClockGapUs = 10'000;

struct Disturbance {
  double other_cores = 0;  // busy time of everything but the evaluator and its worker
  double steal_cores = 0;  // time the hypervisor gave to other guests
  double total() const { return other_cores + steal_cores; }
};

// CPU accounting around one timing run.
class DisturbanceProbe {
 public:
  explicit DisturbanceProbe(pid_t worker)
      : worker_(worker), start_(Clock::now()), machine_(ReadMachineCpuTicks()),
        worker_ticks_(ProcessCpuTicks(worker)), self_ticks_(ProcessCpuTicks(::getpid())) {}

  Disturbance Finish() const {
    const auto machine = ReadMachineCpuTicks();
    const auto worker_ticks = ProcessCpuTicks(worker_);
    const auto self_ticks = ProcessCpuTicks(::getpid());
    const double ticks = SecondsSince(start_) * ClockTicksPerSecond();
    if (!machine || !machine_ || !worker_ticks || !worker_ticks_ || !self_ticks || !self_ticks_ || ticks <= 0) {
      return {};
    }
    const double busy = static_cast<double>(machine->busy - machine_->busy);
    const double ours = static_cast<double>((*worker_ticks - *worker_ticks_) + (*self_ticks - *self_ticks_));
    return {std::max(0.0, busy - ours) / ticks, static_cast<double>(machine->steal - machine_->steal) / ticks};
  }

 private:
  pid_t worker_;
  Clock::time_point start_;
  std::optional<MachineCpuTicks> machine_;
  std::optional<uint64_t> worker_ticks_;
  std::optional<uint64_t> self_ticks_;
};

}  // namespace

void WorkerSession::StartTimingInputs() {
  // Every timed call starts cold: the worker evicts a set from the caches after its round, or,
  // where it cannot, the sets rotate through more memory than the last-level cache holds. The
  // rotation costs dearly where that cache is large: on a 2-core VM reporting a 480 MiB L3,
  // softmax's 13 sets of 96 MiB (page faults, copies, generation) made its cached verdict
  // 5.1-5.9 s; with eviction and 2 sets it is 3.2-3.7 s, at the same per-call times.
  timing_plan_.layout = MakeLayout(task_, task_.bench_shape, kCaseGuardBytes);
  timing_plan_.layout.held_seed = HeldSeed(secret_seed_);
  for (const auto& slot : timing_plan_.layout.tensors) {
    timing_plan_.set_bytes += slot.output ? 2 * slot.bytes : slot.bytes;
  }
  const size_t set_bytes = std::max<size_t>(timing_plan_.set_bytes, 1);
  const size_t wanted = CanEvictFromCaches() ? 2 : (5 * machine_.llc_bytes / 2 + set_bytes - 1) / set_bytes;
  const size_t affordable = std::max<size_t>(1, kMaxTimingBytes / set_bytes);
  timing_plan_.sets = std::min({std::max<size_t>(wanted, 2), kMaxTimingSets, affordable});
  timing_plan_.seed = DeriveSeed(secret_seed_, kTimingSalt);
  timing_inputs_ = std::async(std::launch::async, [this]() -> Result<std::unique_ptr<SharedMemory>> {
    const size_t bytes = TimingInputBytes(timing_plan_.layout, timing_plan_.sets);
    auto memory = SharedMemory::Create(std::max<size_t>(bytes, 1));
    if (!memory.ok()) return memory.error();
    FillTimingInputs(timing_plan_.layout, timing_plan_.sets, task_.distributions.front(),
                     timing_plan_.seed, (*memory)->data());
    return memory;
  });
}

bool WorkerSession::TimeAgainstBaseline() {
  if (options_.progress) options_.progress("timing against the baseline");
  if (!timing_inputs_.valid()) StartTimingInputs();
  auto inputs = timing_inputs_.get();
  // The evaluator's own background work (the re-check's inputs and references) must be done
  // before the clock starts: it would take cores from a parallel kernel, not from the baseline.
  for (auto& prepared : recheck_prepared_) prepared.wait();
  case_buffers_.Clear();  // every case is prepared: the kept memory is not held through timing
  // Then the cores alone: other evaluations' checks and builds finish first, and new ones wait
  // until the timing is done. The stage starts once they are held.
  const auto waiting = Clock::now();
  TakeCoresAlone();
  const double waited_s = SecondsSince(waiting);
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kTiming);
  if (options_.gpu_gate != nullptr) stage.details.MutableTiming().waited_s = waited_s;
  if (!inputs.ok()) return Finish(stage, VerdictStatus::kInfraError, inputs.error().message);
  const CaseLayout& layout = timing_plan_.layout;
  const size_t sets = timing_plan_.sets;
  const size_t set_bytes = timing_plan_.set_bytes;
  const TensorSpec& first_output = task_.outputs.front();
  TimingSettings settings;
  settings.bench = layout.ToJson();
  settings.bench.update({{"sets", sets},
                         {"seed", timing_plan_.seed},
                         {"distribution", DistributionName(task_.distributions.front())},
                         {"mutations", 16},
                         {"tolerance",
                          {{"norm", task_.ToleranceFor(first_output.dtype).norm},
                           {"elem", task_.ToleranceFor(first_output.dtype).elem},
                           {"epsilon", ComparisonEpsilon(first_output.dtype)},
                           {"accumulation", task_.Accumulation(task_.bench_shape)}}}});
  settings.sets = sets;
  // A set more in the worker where memory allows: the second side's inputs (PlanRound).
  settings.spare_set = (sets + 1) * std::max<size_t>(set_bytes, 1) <= kMaxTimingBytes;
  settings.order_seed = DeriveSeed(secret_seed_, kOrderSalt);
  settings.budget_s = options_.timing_budget_s;
  settings.target_rse = options_.target_rse;
  settings.tie_band = options_.tie_band;
  settings.call_timeout = options_.call_timeout;
  settings.worker_clock = kind_.worker_clock;
  // Other processes (or the hypervisor) taking a core during timing slow a parallel kernel more
  // than a serial baseline: measure how much else ran, and time once more if it was a lot.
  std::string error;
  std::optional<TimingOutcome> outcome;     // the least disturbed attempt whose clocks agreed
  Disturbance disturbance;
  std::optional<TimingOutcome> disagreeing;  // the last attempt whose clocks did not
  Disturbance disagreeing_disturbance;
  int attempts = 0;
  for (int attempt = 0; attempt < kMaxTimingAttempts; ++attempt) {
    const DisturbanceProbe probe(worker_->pid());
    auto next = DriveTiming(*worker_, settings, (*inputs)->fd(), &error);
    if (!next) {
      stage.seconds = SecondsSince(start);
      return worker_->failure() ? WorkerFailed(stage)
                                : Finish(stage, VerdictStatus::kInfraError, "worker error: " + error);
    }
    if (next->candidate_raised) {
      stage.seconds = SecondsSince(start);
      return FinishCandidateRaised(recorder_, stage, *next->candidate_raised,
                                   CaseRef{.label = "the bench shape while timed", .shape = task_.FormatShape(task_.bench_shape)},
                                   worker_->OutputTail(2000));
    }
    ++attempts;
    const Disturbance measured = probe.Finish();
    TimingFacts& facts = stage.details.MutableTiming();
    if (!facts.other_load_cores) facts.other_load_cores.emplace();
    if (!facts.steal_cores) facts.steal_cores.emplace();
    facts.other_load_cores->push_back(measured.other_cores);
    facts.steal_cores->push_back(measured.steal_cores);
    const bool quiet = measured.total() <= kDisturbedCores;
    if (next->mismatch) {
      outcome = std::move(next);
      disturbance = measured;
      break;
    }
    if (next->tampering && !quiet && !next->clock_ran_long &&
        next->clock_gap_excess_us <= kLoadClockGapUs) {
      // A busy machine opens a gap between the two clocks for a parallel kernel (its reply waits
      // for a core behind its own spinning threads), every attempt while the load lasts: a few
      // ms, seen at 2.2 ms on two cores under four busy processes. Forgiven only where the
      // candidate's in-process time reads short: each time is the larger of the evaluator's clock
      // (less the request's cost) and the worker's, so that gains it nothing; a clock that reads
      // longer than the request around it (which would inflate a side's time) is never load's.
      next->load_clock_gap_us = next->clock_gap_excess_us;
      next->tampering.reset();
    }
    if (next->tampering) {
      // A candidate that changes the timer does so every time; load does not: a disagreement
      // convicts when the machine was quiet or when every attempt showed it.
      disagreeing = std::move(next);
      disagreeing_disturbance = measured;
      if (quiet) break;
      continue;
    }
    if (!outcome || measured.total() < disturbance.total()) {
      outcome = std::move(next);
      disturbance = measured;
    }
    if (quiet || attempts >= kTimingAttempts) break;
  }
  if (disagreeing && (!outcome || disagreeing_disturbance.total() <= kDisturbedCores)) {
    outcome = std::move(disagreeing);
    disturbance = disagreeing_disturbance;
  }
  TimingFacts& facts = stage.details.MutableTiming();
  facts.attempts = attempts;
  timing_disturbed_ = disturbance.total() > kDisturbedCores;
  stage.seconds = SecondsSince(start);
  if (outcome->load_clock_gap_us > 0) {
    stage.details.note = fmt::format("the worker's clock saw the candidate {:.0f} us shorter than the evaluator's "
                                     "while other work ran: within what load causes, not counted as tampering",
                                     outcome->load_clock_gap_us);
  }
  if (disturbance.total() > kDisturbedCores) {
    stage.details.note += (stage.details.note.empty() ? "" : "; ") + fmt::format(
        "other work used {:.2f} cores while timing ran (in each of {} attempts): the timing did not hold the "
        "cores alone, so a parallel kernel's speedup may read low, and `ksmith bench` does not compare it",
        disturbance.total(), attempts);
  }
  facts.sets = sets;
  facts.set_bytes = set_bytes;
  facts.request_overhead_us = outcome->overhead_us;
  facts.setup_s = outcome->setup_s;
  facts.loop_s = outcome->loop_s;
  facts.budget_s = options_.timing_budget_s;
  facts.stopped_by = outcome->stopped_by;
  facts.rounds = static_cast<int64_t>(outcome->candidate_us.size());
  facts.shape = task_.FormatShape(task_.bench_shape);
  if (outcome->mismatch) {
    facts.mismatch = *outcome->mismatch;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("a timed call returned a wrong result although every correctness case "
                              "passed (it behaves differently when timed): {}",
                              *outcome->mismatch),
                  FailureKind::kTimedOutputDiffers);
  }
  if (outcome->tampering) {
    return Finish(stage, VerdictStatus::kIntegrityViolation, *outcome->tampering, FailureKind::kTimeNotReal);
  }
  const ReuseTimes candidate_reuse{MedianWithInterval(outcome->candidate_us).median, outcome->candidate_reuse_us,
                                   outcome->candidate_pair_fresh_us, outcome->candidate_pair_reused_us};
  const ReuseTimes baseline_reuse{MedianWithInterval(outcome->baseline_us).median, outcome->baseline_reuse_us,
                                  outcome->baseline_pair_fresh_us, outcome->baseline_pair_reused_us};
  if (!candidate_reuse.pair_fresh_us.empty()) {
    facts.reuse_pairs = static_cast<int64_t>(candidate_reuse.pair_fresh_us.size());
  }
  facts.candidate = SideTiming{.cold_us = candidate_reuse.fresh_us,
                               .samples = static_cast<int64_t>(outcome->candidate_us.size()),
                               .reuse_us = ReusedMedianUs(candidate_reuse)};
  facts.baseline = SideTiming{.cold_us = baseline_reuse.fresh_us,
                              .samples = static_cast<int64_t>(outcome->baseline_us.size()),
                              .reuse_us = ReusedMedianUs(baseline_reuse)};
  if (const auto skipped = JudgeReuse(candidate_reuse, baseline_reuse)) {
    return Finish(stage, VerdictStatus::kIntegrityViolation, *skipped, FailureKind::kFasterOnReusedInputs);
  }
  verdict_.timing = MakeTiming(outcome->candidate_us, outcome->baseline_us, task_.baselines.at(kind_.backend).description);
  verdict_.timing->alone = !timing_disturbed_;
  facts.candidate_inner_median_us = MedianWithInterval(outcome->candidate_inner_us).median;
  stage.details.summary = fmt::format(
      "{} rounds over {} rotating input sets of {:.1f} MiB, timed {}",
      outcome->candidate_us.size(), sets, set_bytes / 1048576.0,
      kind_.worker_clock ? "by the device's events, bounded by the request around each call" : "from outside the worker");
  if (!stage.details.note.empty()) stage.details.summary += "; warning: " + stage.details.note;
  return true;
}

bool WorkerSession::PhysicalLimit() {
  if (!kind_.host_peaks) {
    auto& stage = Stage(StageId::kPhysicalLimit);
    stage.details.summary = "not checked: this machine's measured peaks are not the device's";
    return true;
  }
  // Measuring the machine again wants the cores alone, as timing does.
  std::function<MeasuredPeaks()> remeasure;
  if (remeasure_) {
    remeasure = [this] {
      TakeCoresAlone();
      const MeasuredPeaks peaks = remeasure_();
      ShareCores();
      return peaks;
    };
  }
  return CheckPhysicalLimit(recorder_, *verdict_.timing, task_, task_.bench_shape,
                            {machine_.memory_bandwidth_gbs, machine_.fp32_gflops, 0}, "this machine", remeasure,
                            timing_disturbed_ ? kDisturbedPeakMargin : kPeakNoiseMargin);
}

}  // namespace ksmith
